# label: hazard silent
# why: Megatron's vocab-parallel cross entropy (used for vocab_parallel_log_probs_from_logits) subtracts the max and exponentiates the logits in place to save memory, so the entropy verl computes afterwards from the same logits tensor is silently computed on exp-shifted values
# source: https://github.com/verl-project/verl/pull/1672
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _VocabParallelCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, vocab_parallel_logits, target):
        logits_max = torch.max(vocab_parallel_logits, dim=-1)[0]
        # all_reduce(MAX) over the tensor-parallel group is a no-op with TP=1
        # In-place subtraction reduces memory pressure.
        vocab_parallel_logits -= logits_max.unsqueeze(dim=-1)  # <-- IPL005: mutates the caller's logits inside forward without mark_dirty
        logits_2d = vocab_parallel_logits.view(-1, vocab_parallel_logits.size(-1))
        masked_target_1d = target.view(-1)
        arange_1d = torch.arange(start=0, end=logits_2d.size()[0], device=logits_2d.device)
        predicted_logits = logits_2d[arange_1d, masked_target_1d].clone().contiguous().view_as(target)
        exp_logits = vocab_parallel_logits
        torch.exp(vocab_parallel_logits, out=exp_logits)  # <-- IPL005: exponentiates the caller's logits in place
        sum_exp_logits = exp_logits.sum(dim=-1)
        loss = torch.log(sum_exp_logits) - predicted_logits
        exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))
        ctx.save_for_backward(exp_logits, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, masked_target_1d = ctx.saved_tensors
        grad_input = softmax.clone()
        grad_2d = grad_input.view(-1, grad_input.size(-1))
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0], device=grad_2d.device)
        grad_2d[arange_1d, masked_target_1d] -= 1.0
        grad_input.mul_(grad_output.unsqueeze(dim=-1))
        return grad_input, None


def vocab_parallel_log_probs_from_logits(logits, labels):
    return -_VocabParallelCrossEntropy.apply(logits, labels)


def vocab_parallel_entropy(logits):
    log_probs = F.log_softmax(logits.float(), dim=-1)
    return -(log_probs.exp() * log_probs).sum(-1)


class TinyActor(nn.Module):
    def __init__(self, vocab=12, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.mlp(self.emb(input_ids)))


def compute_policy_loss(old_log_prob, log_prob, advantages, response_mask, cliprange=0.2):
    ratio = torch.exp(log_prob - old_log_prob)
    pg_losses = torch.max(-advantages * ratio, -advantages * torch.clamp(ratio, 1 - cliprange, 1 + cliprange))
    return (pg_losses * response_mask).sum() / response_mask.sum()


actor = TinyActor()
input_ids = torch.randint(0, 12, (2, 5))
responses = torch.randint(0, 12, (2, 5))
response_mask = torch.ones(2, 5)
advantages = torch.tensor([[0.5], [-1.0]]).expand(2, 5)

logits = actor(input_ids)
log_prob = vocab_parallel_log_probs_from_logits(logits, responses)
entropy = vocab_parallel_entropy(logits)
old_log_prob = log_prob.detach() + 0.01
pg_loss = compute_policy_loss(old_log_prob, log_prob, advantages, response_mask)
entropy_loss = (entropy * response_mask).sum() / response_mask.sum()
policy_loss = pg_loss - 0.01 * entropy_loss
policy_loss.backward()
