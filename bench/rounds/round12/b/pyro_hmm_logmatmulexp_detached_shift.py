# label: safe
# why: _logmatmulexp clamps its shifts in place, but each shift is a fresh tensor produced by max() over a detached copy, so the clamp never touches x, y or anything saved for backward
# source: https://github.com/pyro-ppl/pyro/blob/9704fc8135cfc062f7574890e693db6abfffe63a/pyro/distributions/hmm.py
import torch
import torch.nn.functional as F


class _SafeLog(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.log()

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / x.clamp(min=torch.finfo(x.dtype).eps)


def safe_log(x):
    return _SafeLog.apply(x)


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


torch.manual_seed(0)
trans_logits = torch.randn(3, 3, requires_grad=True)
obs_logits = torch.randn(3, 4, requires_grad=True)
obs = torch.tensor([0, 2, 1, 3, 3])

log_trans = F.log_softmax(trans_logits, -1)
log_obs = F.log_softmax(obs_logits, -1)
# per-step factors: transition times emission of the observed symbol
factors = log_trans + log_obs[:, obs].t().unsqueeze(-2)
log_prob = _sequential_logmatmulexp(factors).logsumexp(-1).logsumexp(-1)
(-log_prob).backward()
