# label: hazard raises
# why: density_1_proxy is just another name for raw_gates, the softmax output that softmax saved for backward, and `density_1_proxy *= ...` modifies it in place
# source: https://github.com/lucidrains/mixture-of-experts/issues/6 (fixed in commit 04201ee9d1add6913032b3cb75c7b59b289b16de)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def top1(t):
    values, index = t.topk(k=1, dim=-1)
    values, index = map(lambda x: x.squeeze(dim=-1), (values, index))
    return values, index


class Top2Gating(nn.Module):
    def __init__(self, dim, num_gates, eps=1e-9):
        super().__init__()
        self.eps = eps
        self.num_gates = num_gates
        self.w_gating = nn.Parameter(torch.randn(dim, num_gates))

    def forward(self, x, importance=None):
        num_gates = self.num_gates
        raw_gates = torch.einsum('...bnd,...de->...bne', x, self.w_gating)
        raw_gates = raw_gates.softmax(dim=-1)

        gate_1, index_1 = top1(raw_gates)
        mask_1 = F.one_hot(index_1, num_gates).float()
        density_1_proxy = raw_gates

        if importance is not None:
            equals_one_mask = (importance == 1.).float()
            mask_1 *= equals_one_mask[..., None]
            gate_1 *= equals_one_mask
            density_1_proxy *= equals_one_mask[..., None]  # <-- IPL001: alias of the softmax output saved for backward
            del equals_one_mask

        gates_without_top_1 = raw_gates * (1. - mask_1)
        gate_2, index_2 = top1(gates_without_top_1)

        denom = gate_1 + gate_2 + self.eps
        gate_1 = gate_1 / denom
        gate_2 = gate_2 / denom

        density_1 = mask_1.mean(dim=-2)
        density_1_proxy = density_1_proxy.mean(dim=-2)
        loss = (density_1_proxy * density_1).mean() * float(num_gates ** 2)
        return gate_1, gate_2, loss


gating = Top2Gating(dim=4, num_gates=3)
inputs = torch.randn(2, 5, 4)
importance = torch.tensor([[1., 1., 0.5, 1., 0.], [1., 0.5, 1., 1., 1.]])
gate_1, gate_2, aux_loss = gating(inputs, importance)
total = aux_loss + gate_1.sum() + gate_2.sum()
total.backward()
