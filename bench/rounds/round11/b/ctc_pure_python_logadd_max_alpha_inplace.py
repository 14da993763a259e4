# label: hazard raises
# why: the hand-written logadd uses torch.max, which saves its slice inputs of log_alpha; writing the next time step into log_alpha in place bumps the shared version counter before backward.
# source: https://github.com/pytorch/pytorch/issues/31819
import torch

torch.manual_seed(0)


def logadd(x0, x1, x2):
    m = torch.max(torch.max(x0, x1), x2)
    m = m.masked_fill(m == float('-inf'), 0)
    res = (x0 - m).exp() + (x1 - m).exp() + (x2 - m).exp()
    return res.log().add(m)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0):
    input_time_size, batch_size = log_probs.shape[:2]
    B = torch.arange(batch_size, device=input_lengths.device)
    _t_a_r_g_e_t_s_ = torch.cat([targets, targets[:, :1]], dim=-1)
    _t_a_r_g_e_t_s_ = torch.stack([torch.full_like(_t_a_r_g_e_t_s_, blank), _t_a_r_g_e_t_s_], dim=-1).flatten(start_dim=-2)
    diff_labels = torch.cat([torch.as_tensor([[False, False]]).expand(batch_size, -1), _t_a_r_g_e_t_s_[:, 2:] != _t_a_r_g_e_t_s_[:, :-2]], dim=1)
    zero_padding, zero = 2, torch.tensor(float('-inf'), dtype=log_probs.dtype)
    log_probs_ = log_probs.gather(-1, _t_a_r_g_e_t_s_.expand(input_time_size, -1, -1))
    log_alpha = torch.full((input_time_size, batch_size, zero_padding + _t_a_r_g_e_t_s_.shape[-1]), float('-inf'), dtype=log_probs.dtype)
    log_alpha[0, :, zero_padding + 0] = log_probs[0, :, blank]
    log_alpha[0, :, zero_padding + 1] = log_probs[0, B, _t_a_r_g_e_t_s_[:, 1]]
    for t in range(1, input_time_size):
        alpha_t = log_probs_[t] + logadd(log_alpha[t - 1, :, 2:], log_alpha[t - 1, :, 1:-1], torch.where(diff_labels, log_alpha[t - 1, :, :-2], zero))
        log_alpha[t, :, 2:] = alpha_t  # <-- IPL001: overwrites log_alpha while torch.max still holds earlier slices of it
    l1l2 = log_alpha[input_lengths - 1, B].gather(-1, torch.stack([zero_padding + target_lengths * 2 - 1, zero_padding + target_lengths * 2], dim=-1))
    return -torch.logsumexp(l1l2, dim=-1)


T, N, C = 6, 2, 5
logits = torch.randn(T, N, C, requires_grad=True)
log_probs = logits.log_softmax(dim=-1)
targets = torch.tensor([[1, 2, 3], [2, 2, 4]])
input_lengths = torch.tensor([6, 6])
target_lengths = torch.tensor([3, 3])

custom_ctc = ctc_loss(log_probs, targets, input_lengths, target_lengths)
custom_ctc_grad, = torch.autograd.grad(custom_ctc.sum(), logits, retain_graph=True)
