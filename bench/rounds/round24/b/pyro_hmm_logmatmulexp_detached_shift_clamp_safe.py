# label: safe
# why: `_logmatmulexp` clamps the row/column maxima in place with `clamp_`, but those maxima come from `x.detach()`/`y.detach()` and are fresh tensors that no backward function has saved.
# source: https://github.com/pyro-ppl/pyro/commit/d0ce9a854be557c4d4de6bdf7a2ab3d1a6dd9fe7
import torch
import torch.nn as nn

torch.manual_seed(0)


def safe_log(x):
    return x.clamp(min=torch.finfo(x.dtype).tiny).log()


def _logmatmulexp(x, y):
    """
    Numerically stable version of ``(x.log() @ y.log()).exp()``.
    """
    finfo = torch.finfo(x.dtype)  # avoid nan due to -inf - -inf
    x_shift = x.detach().max(-1, keepdim=True).values.clamp_(min=finfo.min)
    y_shift = y.detach().max(-2, keepdim=True).values.clamp_(min=finfo.min)
    xy = safe_log(torch.matmul((x - x_shift).exp(), (y - y_shift).exp()))
    return xy + x_shift + y_shift


def _sequential_logmatmulexp(logits):
    """
    For a tensor ``x`` whose time dimension is -3, computes::

        x[..., 0, :, :] @ x[..., 1, :, :] @ ... @ x[..., T-1, :, :]

    but does so numerically stably in log space.
    """
    batch_shape = logits.shape[:-3]
    state_dim = logits.size(-1)
    while logits.size(-3) > 1:
        time = logits.size(-3)
        even_time = time // 2 * 2
        even_part = logits[..., :even_time, :, :]
        x_y = even_part.reshape(batch_shape + (even_time // 2, 2, state_dim, state_dim))
        x, y = x_y.unbind(-3)
        contracted = _logmatmulexp(x, y)
        if time > even_time:
            contracted = torch.cat((contracted, logits[..., -1:, :, :]), dim=-3)
        logits = contracted
    return logits.squeeze(-3)


class DiscreteHMM(nn.Module):
    def __init__(self, state_dim=3, obs_dim=4):
        super().__init__()
        self.init_logits = nn.Parameter(torch.randn(state_dim))
        self.trans_logits = nn.Parameter(torch.randn(state_dim, state_dim))
        self.obs_logits = nn.Parameter(torch.randn(state_dim, obs_dim))

    def log_prob(self, obs):
        init = self.init_logits.log_softmax(-1)
        trans = self.trans_logits.log_softmax(-1)
        emit = self.obs_logits.log_softmax(-1)[:, obs].transpose(0, 1)  # [T, state]
        logits = trans.unsqueeze(0) + emit[1:].unsqueeze(-2)
        result = _sequential_logmatmulexp(logits)
        start = init + emit[0]
        return torch.logsumexp(start.unsqueeze(-1) + result, dim=(-2, -1))


def main():
    hmm = DiscreteHMM()
    obs = torch.tensor([0, 2, 1, 3, 3, 0, 1])
    loss = -hmm.log_prob(obs)
    loss.backward()
    return loss.detach(), hmm.trans_logits.grad


nll, trans_grad = main()
