# label: hazard raises
# why: the vocab-parallel cross-entropy Function rewrites its input logits in place (sub_, exp out=, div_) and saves that storage as softmax, while the entropy Function saved the same logits and edits them in its backward, so one backward finds the other's saved tensor bumped.
# source: https://github.com/verl-project/verl/pull/2484
import torch
import torch.nn as nn

torch.manual_seed(0)


class _VocabParallelCrossEntropy(torch.autograd.Function):
    """Megatron-style cross entropy over a vocab shard (tensor-parallel size 1 here)."""

    @staticmethod
    def forward(ctx, vocab_parallel_logits, target):
        logits_max = torch.max(vocab_parallel_logits, dim=-1)[0]
        # all_reduce(logits_max, MAX) is a no-op with one rank
        vocab_parallel_logits.sub_(logits_max.unsqueeze(dim=-1))  # <-- IPL005: mutates the caller's logits in forward without mark_dirty

        partition_vocab_size = vocab_parallel_logits.size()[-1]
        logits_2d = vocab_parallel_logits.view(-1, partition_vocab_size)
        masked_target_1d = target.view(-1)
        arange_1d = torch.arange(start=0, end=logits_2d.size()[0])
        predicted_logits = logits_2d[arange_1d, masked_target_1d].clone().view_as(target)
        target_mask = torch.zeros_like(target, dtype=torch.bool)

        exp_logits = vocab_parallel_logits
        torch.exp(vocab_parallel_logits, out=exp_logits)
        sum_exp_logits = exp_logits.sum(dim=-1)
        loss = torch.log(sum_exp_logits) - predicted_logits
        exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target_1d = ctx.saved_tensors
        grad_input = softmax.clone()
        partition_vocab_size = softmax.size()[-1]
        grad_2d = grad_input.view(-1, partition_vocab_size)
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0])
        grad_2d[arange_1d, masked_target_1d] -= 1.0 - target_mask.view(-1).float()
        grad_input = grad_input * grad_output.unsqueeze(dim=-1)
        return grad_input, None


class _VocabParallelEntropy(torch.autograd.Function):

    @staticmethod
    def forward(ctx, vocab_parallel_logits):
        logits_max = vocab_parallel_logits.max(dim=-1, keepdim=True).values
        normalized_vocab_parallel_logits = vocab_parallel_logits - logits_max
        normalized_exp_logits = normalized_vocab_parallel_logits.exp_()
        normalized_sum_exp_logits = normalized_exp_logits.sum(dim=-1, keepdim=True)
        softmax_logits = normalized_exp_logits.div_(normalized_sum_exp_logits)
        sum_softmax_times_logits = (softmax_logits * vocab_parallel_logits).sum(dim=-1, keepdim=True)
        entropy = logits_max + normalized_sum_exp_logits.log() - sum_softmax_times_logits
        ctx.save_for_backward(vocab_parallel_logits, softmax_logits, sum_softmax_times_logits)
        return entropy.squeeze(dim=-1)

    @staticmethod
    def backward(ctx, grad_output):
        vocab_parallel_logits, softmax_logits, sum_softmax_times_logits = ctx.saved_tensors
        # reuse softmax_logits as grad
        vocab_parallel_logits.sub_(sum_softmax_times_logits)
        softmax_logits.mul_(vocab_parallel_logits)
        softmax_logits.mul_(grad_output.unsqueeze(dim=-1))
        # recover vocab_parallel_logits
        vocab_parallel_logits.add_(sum_softmax_times_logits)
        softmax_logits.mul_(-1)
        return softmax_logits


def vocab_parallel_log_probs_from_logits(logits, labels):
    return -_VocabParallelCrossEntropy.apply(logits, labels)


def vocab_parallel_entropy(vocab_parallel_logits):
    return _VocabParallelEntropy.apply(vocab_parallel_logits)


class TinyGPT(nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        return self.lm_head(torch.tanh(self.embed(input_ids)))


model = TinyGPT()
input_ids = torch.randint(0, 11, (2, 6))
label = torch.roll(input_ids, shifts=-1, dims=1)
advantages = torch.tensor([[0.4], [-0.3]])
old_log_prob = -torch.rand(2, 6) - 1.5
entropy_coeff = 0.01

logits = model(input_ids)
log_probs = vocab_parallel_log_probs_from_logits(logits, label)
entropy = vocab_parallel_entropy(logits)
ratio = torch.exp(log_probs - old_log_prob)
pg_loss = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()
policy_loss = pg_loss - entropy_coeff * entropy.mean()
policy_loss.backward()
