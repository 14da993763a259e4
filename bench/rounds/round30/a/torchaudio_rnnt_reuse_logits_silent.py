# label: hazard silent
# why: with reuse_logits_for_grads=True the RNN-T loss Function writes its gradients into the caller's `logits` buffer in forward (without ctx.mark_dirty), so the joiner logits the training step reuses afterwards for greedy-accuracy logging silently hold gradients instead of scores.
# source: https://github.com/pytorch/audio/pull/1536
import torch
import torch.nn as nn

torch.manual_seed(0)


def _rnnt_costs_and_gradients(logits, targets, logit_lengths, target_lengths, blank):
    with torch.enable_grad():
        x = logits.detach().requires_grad_()
        log_probs = x.log_softmax(-1)
        costs = []
        for b in range(x.shape[0]):
            T, U = int(logit_lengths[b]), int(target_lengths[b])
            alpha = [[None] * (U + 1) for _ in range(T)]
            alpha[0][0] = log_probs.new_zeros(())
            for t in range(T):
                for u in range(U + 1):
                    if t == 0 and u == 0:
                        continue
                    cands = []
                    if t > 0:
                        cands.append(alpha[t - 1][u] + log_probs[b, t - 1, u, blank])
                    if u > 0:
                        cands.append(alpha[t][u - 1] + log_probs[b, t, u - 1, targets[b, u - 1]])
                    alpha[t][u] = torch.logsumexp(torch.stack(cands), 0)
            costs.append(-(alpha[T - 1][U] + log_probs[b, T - 1, U, blank]))
        costs = torch.stack(costs)
        gradients, = torch.autograd.grad(costs.sum(), x)
    return costs.detach(), gradients


class RNNTLossFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, targets, logit_lengths, target_lengths, blank, reuse_logits_for_grads):
        costs, gradients = _rnnt_costs_and_gradients(logits, targets, logit_lengths, target_lengths, blank)
        if reuse_logits_for_grads:
            logits.copy_(gradients)  # <-- IPL005
            gradients = logits
        ctx.save_for_backward(gradients)
        return costs

    @staticmethod
    def backward(ctx, grad_output):
        gradients, = ctx.saved_tensors
        return gradients * grad_output.view(-1, 1, 1, 1), None, None, None, None, None


def rnnt_loss(logits, targets, logit_lengths, target_lengths, blank=-1, reuse_logits_for_grads=True):
    if blank < 0:
        blank = logits.shape[-1] + blank
    costs = RNNTLossFunction.apply(logits, targets, logit_lengths, target_lengths, blank,
                                   reuse_logits_for_grads)
    return costs.mean()


class Joiner(nn.Module):
    def __init__(self, dim=8, num_symbols=5):
        super().__init__()
        self.linear = nn.Linear(dim, num_symbols)

    def forward(self, source_encodings, target_encodings):
        joint = source_encodings.unsqueeze(2) + target_encodings.unsqueeze(1)
        return self.linear(torch.tanh(joint))


def main():
    joiner = Joiner()
    source_encodings = torch.randn(2, 4, 8, requires_grad=True)
    target_encodings = torch.randn(2, 3, 8, requires_grad=True)
    targets = torch.tensor([[1, 2], [3, 1]])
    logit_lengths = torch.tensor([4, 4])
    target_lengths = torch.tensor([2, 2])
    logits = joiner(source_encodings, target_encodings)
    loss = rnnt_loss(logits, targets, logit_lengths, target_lengths)
    loss.backward()
    # greedy symbols for the training log
    greedy = logits.detach().argmax(-1)
    return loss.detach(), greedy, joiner.linear.weight.grad


loss, greedy, weight_grad = main()
