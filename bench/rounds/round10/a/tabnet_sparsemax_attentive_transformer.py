# label: safe
# why: SparsemaxFunction.forward shifts its input with `input -= max_val` (no mark_dirty), but in TabNet that input is a fresh torch.mul output nobody reads again; M_loss += / /= only touch add outputs
# source: https://github.com/dreamquark-ai/tabnet/blob/61c294a99e3035ee1f52d4666bdb30bc49081213/pytorch_tabnet/sparsemax.py
import torch
from torch import nn
from torch.autograd import Function

torch.manual_seed(0)


def _make_ix_like(input, dim=0):
    d = input.size(dim)
    rho = torch.arange(1, d + 1, device=input.device, dtype=input.dtype)
    view = [1] * input.dim()
    view[0] = -1
    return rho.view(view).transpose(0, dim)


class SparsemaxFunction(Function):
    """
    An implementation of sparsemax (Martins & Astudillo, 2016). See
    :cite:`DBLP:journals/corr/MartinsA16` for detailed description.
    By Ben Peters and Vlad Niculae
    """

    @staticmethod
    def forward(ctx, input, dim=-1):
        ctx.dim = dim
        max_val, _ = input.max(dim=dim, keepdim=True)
        input -= max_val  # same numerical stability trick as for softmax
        tau, supp_size = SparsemaxFunction._threshold_and_support(input, dim=dim)
        output = torch.clamp(input - tau, min=0)
        ctx.save_for_backward(supp_size, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        supp_size, output = ctx.saved_tensors
        dim = ctx.dim
        grad_input = grad_output.clone()
        grad_input[output == 0] = 0

        v_hat = grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze()
        v_hat = v_hat.unsqueeze(dim)
        grad_input = torch.where(output != 0, grad_input - v_hat, grad_input)
        return grad_input, None

    @staticmethod
    def _threshold_and_support(input, dim=-1):
        input_srt, _ = torch.sort(input, descending=True, dim=dim)
        input_cumsum = input_srt.cumsum(dim) - 1
        rhos = _make_ix_like(input, dim)
        support = rhos * input_srt > input_cumsum

        support_size = support.sum(dim=dim).unsqueeze(dim)
        tau = input_cumsum.gather(dim, support_size - 1)
        tau /= support_size.to(input.dtype)
        return tau, support_size


sparsemax = SparsemaxFunction.apply


class Sparsemax(nn.Module):
    def __init__(self, dim=-1):
        self.dim = dim
        super(Sparsemax, self).__init__()

    def forward(self, input):
        return sparsemax(input, self.dim)


class AttentiveTransformer(torch.nn.Module):
    def __init__(self, input_dim, group_dim):
        super(AttentiveTransformer, self).__init__()
        self.fc = nn.Linear(input_dim, group_dim, bias=False)
        self.bn = nn.BatchNorm1d(group_dim, momentum=0.02)
        self.selector = Sparsemax(dim=-1)

    def forward(self, priors, processed_feat):
        x = self.fc(processed_feat)
        x = self.bn(x)
        x = torch.mul(x, priors)
        x = self.selector(x)
        return x


class TabNetEncoderLite(nn.Module):
    def __init__(self, input_dim=6, n_d=4, n_a=4, n_steps=3, gamma=1.3):
        super().__init__()
        self.n_d, self.n_a, self.n_steps, self.gamma = n_d, n_a, n_steps, gamma
        self.epsilon = 1e-15
        self.initial_bn = nn.BatchNorm1d(input_dim, momentum=0.01)
        self.initial_splitter = nn.Sequential(nn.Linear(input_dim, n_d + n_a), nn.BatchNorm1d(n_d + n_a))
        self.att_transformers = nn.ModuleList([AttentiveTransformer(n_a, input_dim) for _ in range(n_steps)])
        self.feat_transformers = nn.ModuleList(
            [nn.Sequential(nn.Linear(input_dim, n_d + n_a), nn.BatchNorm1d(n_d + n_a)) for _ in range(n_steps)])
        self.group_attention_matrix = torch.eye(input_dim)

    def forward(self, x, prior=None):
        x = self.initial_bn(x)
        if prior is None:
            prior = torch.ones(x.shape)
        M_loss = 0
        att = self.initial_splitter(x)[:, self.n_d:]
        steps_output = []
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            M_loss += torch.mean(torch.sum(torch.mul(M, torch.log(M + self.epsilon)), dim=1))
            # update prior
            prior = torch.mul(self.gamma - M, prior)
            # output
            M_feature_level = torch.matmul(M, self.group_attention_matrix)
            masked_x = torch.mul(M_feature_level, x)
            out = self.feat_transformers[step](masked_x)
            d = nn.ReLU()(out[:, : self.n_d])
            steps_output.append(d)
            # update attention
            att = out[:, self.n_d:]
        M_loss /= self.n_steps
        return steps_output, M_loss


encoder = TabNetEncoderLite()
final_mapping = nn.Linear(4, 2, bias=False)
X = torch.randn(16, 6)
y = torch.randint(0, 2, (16,))
steps_output, M_loss = encoder(X)
res = torch.sum(torch.stack(steps_output, dim=0), dim=0)
logits = final_mapping(res)
loss = nn.functional.cross_entropy(logits, y) - 1e-3 * M_loss
loss.backward()
