# label: hazard raises
# why: the vocab-parallel cross-entropy Function rewrites its logits input in place (subtract max, exp into it, divide) without mark_dirty, while the entropy computed just before saved those same logits, so the PPO actor loss cannot backpropagate
# source: https://github.com/volcengine/verl/pull/2484 (commit 73fc53f600308121f50606c6ab9cae6cd8dcb71c; in-place Function from NVIDIA/Megatron-LM commit 9634c0e4a332875bea4fca5e280764cdde4eae80)
import torch
import torch.nn as nn

torch.manual_seed(0)


class VocabUtility:
    @staticmethod
    def vocab_range_from_per_partition_vocab_size(per_partition_vocab_size, rank, world_size):
        index_f = rank * per_partition_vocab_size
        return index_f, index_f + per_partition_vocab_size


class _VocabParallelCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, vocab_parallel_logits, target, label_smoothing=0.0):
        # Maximum value along vocab dimension across all GPUs (single rank here).
        logits_max = torch.max(vocab_parallel_logits, dim=-1)[0]
        # In-place subtraction reduces memory pressure.
        vocab_parallel_logits -= logits_max.unsqueeze(dim=-1)  # <-- IPL005: mutates the logits input without ctx.mark_dirty

        get_vocab_range = VocabUtility.vocab_range_from_per_partition_vocab_size
        partition_vocab_size = vocab_parallel_logits.size()[-1]
        vocab_start_index, vocab_end_index = get_vocab_range(partition_vocab_size, 0, 1)

        target_mask = (target < vocab_start_index) | (target >= vocab_end_index)
        masked_target = target.clone() - vocab_start_index
        masked_target[target_mask] = 0

        logits_2d = vocab_parallel_logits.view(-1, partition_vocab_size)
        masked_target_1d = masked_target.view(-1)
        arange_1d = torch.arange(start=0, end=logits_2d.size()[0], device=logits_2d.device)
        predicted_logits_1d = logits_2d[arange_1d, masked_target_1d]
        predicted_logits_1d = predicted_logits_1d.clone().contiguous()
        predicted_logits = predicted_logits_1d.view_as(target)
        predicted_logits[target_mask] = 0.0

        # Sum of exponential of logits along vocab dimension across all GPUs.
        exp_logits = vocab_parallel_logits
        torch.exp(vocab_parallel_logits, out=exp_logits)  # <-- IPL005: writes exp into the logits input
        sum_exp_logits = exp_logits.sum(dim=-1)

        # Loss = log(sum(exp(logits))) - predicted-logit.
        loss = torch.log(sum_exp_logits) - predicted_logits

        # Normalize
        exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))  # <-- IPL005: normalizes the logits input in place

        ctx.label_smoothing, ctx.vocab_size = label_smoothing, exp_logits.size(-1)
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target_1d = ctx.saved_tensors
        grad_input = softmax
        partition_vocab_size = softmax.size()[-1]
        grad_2d = grad_input.view(-1, partition_vocab_size)
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0], device=grad_2d.device)
        softmax_update = 1.0 - target_mask.view(-1).float()
        grad_2d[arange_1d, masked_target_1d] -= softmax_update
        grad_input.mul_(grad_output.unsqueeze(dim=-1))
        return grad_input, None, None


def vocab_parallel_cross_entropy(vocab_parallel_logits, target, label_smoothing=0.0):
    return _VocabParallelCrossEntropy.apply(vocab_parallel_logits, target, label_smoothing)


def vocab_parallel_log_probs_from_logits(logits, labels):
    return -vocab_parallel_cross_entropy(vocab_parallel_logits=logits, target=labels)


def vocab_parallel_entropy(logits):
    pd = torch.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - (pd * logits).sum(dim=-1)


class TinyPolicy(nn.Module):
    def __init__(self, vocab_size=11, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids, logits_processor, logits_processor_args):
        logits = self.lm_head(torch.tanh(self.embed(input_ids)))
        return logits_processor(logits, **logits_processor_args)


calculate_entropy = True


def logits_processor(logits, label, label_mask):
    assert logits.shape[:2] == label.shape[:2]
    assert label.shape == label_mask.shape
    ret = {}
    if calculate_entropy:
        entropy = vocab_parallel_entropy(logits)
        ret["entropy"] = entropy
    log_probs = vocab_parallel_log_probs_from_logits(logits, label)
    log_probs = log_probs.masked_fill(~label_mask, 0.0)
    ret["log_probs"] = log_probs
    return ret


model = TinyPolicy()
input_ids = torch.randint(0, 11, (2, 5))
label = torch.roll(input_ids, shifts=-1, dims=1)
label_mask = torch.ones_like(label, dtype=torch.bool)
label_mask[:, -1] = False
old_log_prob = torch.randn(2, 5) * 0.1 - 2.4
advantages = torch.randn(2, 5)

output = model(input_ids, logits_processor, {"label": label, "label_mask": label_mask})
ratio = torch.exp(output["log_probs"] - old_log_prob)
pg_loss = torch.max(-advantages * ratio, -advantages * torch.clamp(ratio, 0.8, 1.2))
entropy_coeff = 0.01
policy_loss = (pg_loss * label_mask).sum() / label_mask.sum() - entropy_coeff * output["entropy"].mean()
policy_loss.backward()
