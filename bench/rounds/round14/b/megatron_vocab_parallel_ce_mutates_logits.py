# label: hazard raises
# why: the cross-entropy Function's forward subtracts, exponentiates and normalises its float32 input logits in place (the .float() is a no-op), clobbering logits that the z-loss's logsumexp saved for backward
# source: https://github.com/NVIDIA/Megatron-LM/pull/1594
import torch
import torch.nn as nn

torch.manual_seed(0)


class VocabParallelCrossEntropy:
    @staticmethod
    def calculate_logits_max(vocab_parallel_logits):
        vocab_parallel_logits = vocab_parallel_logits.float()
        logits_max = torch.max(vocab_parallel_logits, dim=-1)[0]
        return vocab_parallel_logits, logits_max

    @staticmethod
    def calculate_predicted_logits(vocab_parallel_logits, target, logits_max, vocab_start_index, vocab_end_index):
        # In-place subtraction reduces memory pressure.
        vocab_parallel_logits -= logits_max.unsqueeze(dim=-1)  # <-- IPL005: mutates the Function's input without mark_dirty
        target_mask = (target < vocab_start_index) | (target >= vocab_end_index)
        masked_target = target.clone() - vocab_start_index
        masked_target[target_mask] = 0
        partition_vocab_size = vocab_parallel_logits.size()[-1]
        logits_2d = vocab_parallel_logits.view(-1, partition_vocab_size)
        masked_target_1d = masked_target.view(-1)
        arange_1d = torch.arange(start=0, end=logits_2d.size()[0], device=logits_2d.device)
        predicted_logits_1d = logits_2d[arange_1d, masked_target_1d]
        predicted_logits_1d = predicted_logits_1d.clone().contiguous()
        predicted_logits = predicted_logits_1d.view_as(target)
        predicted_logits[target_mask] = 0.0
        exp_logits = vocab_parallel_logits
        torch.exp(vocab_parallel_logits, out=exp_logits)  # <-- IPL005: writes exp() back into the input logits
        sum_exp_logits = exp_logits.sum(dim=-1)
        return target_mask, masked_target_1d, predicted_logits, sum_exp_logits, exp_logits

    @staticmethod
    def calculate_cross_entropy_loss(exp_logits, predicted_logits, sum_exp_logits):
        loss = torch.log(sum_exp_logits) - predicted_logits
        exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))  # <-- IPL005: normalises the input logits in place
        return exp_logits, loss


class _VocabParallelCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, vocab_parallel_logits, target):
        vocab_parallel_logits, logits_max = VocabParallelCrossEntropy.calculate_logits_max(vocab_parallel_logits)
        partition_vocab_size = vocab_parallel_logits.size()[-1]
        vocab_start_index, vocab_end_index = 0, partition_vocab_size  # tensor-parallel world size 1
        (target_mask, masked_target_1d, predicted_logits, sum_exp_logits, exp_logits) = (
            VocabParallelCrossEntropy.calculate_predicted_logits(
                vocab_parallel_logits, target, logits_max, vocab_start_index, vocab_end_index
            )
        )
        exp_logits, loss = VocabParallelCrossEntropy.calculate_cross_entropy_loss(exp_logits, predicted_logits, sum_exp_logits)
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target_1d = ctx.saved_tensors
        partition_vocab_size = softmax.size()[-1]
        grad_input = softmax.clone()
        grad_2d = grad_input.view(-1, partition_vocab_size)
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0], device=grad_2d.device)
        softmax_update = 1.0 - target_mask.view(-1).float()
        grad_2d[arange_1d, masked_target_1d] -= softmax_update
        grad_input.mul_(grad_output.unsqueeze(dim=-1))
        return grad_input, None


def vocab_parallel_cross_entropy(vocab_parallel_logits, target):
    return _VocabParallelCrossEntropy.apply(vocab_parallel_logits, target)


class GPTHead(nn.Module):
    def __init__(self, hidden=8, vocab=13):
        super().__init__()
        self.output_layer = nn.Linear(hidden, vocab, bias=False)

    def forward(self, hidden_states):
        return self.output_layer(hidden_states)


head = GPTHead()
hidden_states = torch.randn(2, 5, 8, requires_grad=True)
labels = torch.randint(0, 13, (2, 5))

logits = head(hidden_states)
z_loss = 1e-4 * torch.logsumexp(logits, dim=-1).pow(2).mean()
lm_loss = vocab_parallel_cross_entropy(logits, labels).mean()
loss = lm_loss + z_loss
loss.backward()
