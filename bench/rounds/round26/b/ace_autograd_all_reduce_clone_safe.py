# label: safe
# why: _AutogradAllReduce clones its input before the in-place torch.distributed.all_reduce, so the caller's tensor (still used by the local loss) is never written and no ctx.mark_dirty is needed.
# source: https://github.com/ai2cm/ace/commit/5c71eabeff
import torch
import torch.distributed
import torch.nn as nn

torch.manual_seed(0)


class _AutogradAllReduce(torch.autograd.Function):
    """All-reduce with identity backward.

    Without this, the raw ``torch.distributed.all_reduce`` would break
    the autograd graph because it is an in-place, non-differentiable op.
    """

    @staticmethod
    def forward(ctx, input, group):
        output = input.clone()
        torch.distributed.all_reduce(output, group=group)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class ModelTorchDistributed:
    def __init__(self):
        if not torch.distributed.is_initialized():
            store = torch.distributed.HashStore()
            torch.distributed.init_process_group("gloo", store=store, rank=0, world_size=1)
        self._spatial_group = torch.distributed.group.WORLD
        self._h_size = 2
        self._w_size = 1

    def spatial_reduce_sum(self, tensor):
        if self._h_size > 1 or self._w_size > 1:
            return _AutogradAllReduce.apply(tensor, self._spatial_group)
        return tensor


def area_weighted_mean(dist, data, weights):
    local_sum = (data * weights).sum(dim=(-1, -2))
    global_sum = dist.spatial_reduce_sum(local_sum)
    return global_sum / weights.sum(), local_sum


def main():
    dist = ModelTorchDistributed()
    model = nn.Conv2d(3, 2, kernel_size=3, padding=1)
    x = torch.randn(2, 3, 6, 8)
    weights = torch.rand(6, 8)
    pred = model(x)
    gmean, local_sum = area_weighted_mean(dist, pred, weights)
    loss = gmean.pow(2).mean() + 0.1 * local_sum.pow(2).mean()
    loss.backward()
    return gmean.detach(), model.weight.grad


global_mean, conv_weight_grad = main()
torch.distributed.destroy_process_group()
