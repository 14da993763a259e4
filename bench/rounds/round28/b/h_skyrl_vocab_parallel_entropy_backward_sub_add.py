# label: hazard raises
# why: _VocabParallelEntropy.backward "borrows" its saved logits with sub_()/add_() (modify-then-restore), but ChunkedDistributedLogprob saved the same logits storage, so the version bump makes its backward fail with "modified by an inplace operation".
# source: https://github.com/NovaSky-AI/SkyRL/pull/1648
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _compute_distributed_log_softmax(vocab_parallel_logits):
    logits_max = torch.amax(vocab_parallel_logits, dim=-1, keepdim=True)
    vocab_parallel_logits = vocab_parallel_logits - logits_max
    sum_exp_logits = vocab_parallel_logits.exp().sum(-1, keepdim=True).float()
    return vocab_parallel_logits - sum_exp_logits.log_().to(vocab_parallel_logits.dtype)


class ChunkedDistributedLogprob(torch.autograd.Function):
    @staticmethod
    def forward(ctx, vocab_parallel_logits, target, chunk_size):
        seq_size = vocab_parallel_logits.shape[1]
        num_chunks = (seq_size + chunk_size - 1) // chunk_size
        all_log_probs = []
        for chunk_idx in range(num_chunks):
            chunk_start = chunk_idx * chunk_size
            chunk_end = min(seq_size, (chunk_idx + 1) * chunk_size)
            logits = vocab_parallel_logits[:, chunk_start:chunk_end, :].to(dtype=torch.float32)
            log_probs = _compute_distributed_log_softmax(logits)
            log_probs = torch.gather(log_probs, -1, target[:, chunk_start:chunk_end].unsqueeze(-1)).squeeze(-1)
            all_log_probs.append(log_probs)
        ctx.save_for_backward(vocab_parallel_logits, target)
        ctx.chunk_size = chunk_size
        return torch.cat(all_log_probs, dim=1)

    @staticmethod
    def backward(ctx, grad_output):
        vocab_parallel_logits, target = ctx.saved_tensors
        chunk_size = ctx.chunk_size
        seq_size = vocab_parallel_logits.shape[1]
        all_grad_input = []
        for chunk_start in range(0, seq_size, chunk_size):
            chunk_end = min(seq_size, chunk_start + chunk_size)
            logits = vocab_parallel_logits[:, chunk_start:chunk_end, :].to(dtype=torch.float32)
            softmax_output = _compute_distributed_log_softmax(logits).exp()
            is_chosen = F.one_hot(target[:, chunk_start:chunk_end], num_classes=logits.shape[-1])
            grad_input = is_chosen.float().sub_(softmax_output)
            grad_input.mul_(grad_output[:, chunk_start:chunk_end].unsqueeze(dim=-1))
            all_grad_input.append(grad_input)
        return torch.cat(all_grad_input, dim=1), None, None


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
        # reuse vocab_parallel_logits as scratch space, then restore it
        vocab_parallel_logits.sub_(sum_softmax_times_logits)  # <-- IPL005
        grad_input = softmax_logits * vocab_parallel_logits
        grad_input.mul_(grad_output.unsqueeze(dim=-1))
        vocab_parallel_logits.add_(sum_softmax_times_logits)  # <-- IPL005
        grad_input.mul_(-1)
        return grad_input


class PolicyModel(nn.Module):
    def __init__(self, vocab_size=11, hidden_size=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.output_layer = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, input_ids):
        return self.output_layer(torch.tanh(self.embed(input_ids)))


def policy_loss_fn(model, batch, entropy_coef=0.01, chunk_size=2):
    logits = model(batch["sequences"])
    num_actions = batch["num_actions"]
    target = batch["sequences"][:, 1:]
    logprobs = ChunkedDistributedLogprob.apply(logits[:, :-1, :], target, chunk_size)
    action_log_probs = logprobs[:, -num_actions:]
    ratio = torch.exp(action_log_probs - batch["old_log_probs"])
    policy_loss = -(ratio * batch["advantages"]).mean()
    action_logits = logits[:, -num_actions - 1 : -1, :]
    entropy = _VocabParallelEntropy.apply(action_logits)
    return policy_loss - entropy_coef * entropy.mean()


def main():
    model = PolicyModel()
    sequences = torch.randint(0, 11, (2, 7))
    batch = {
        "sequences": sequences,
        "num_actions": 4,
        "old_log_probs": torch.full((2, 4), -2.3),
        "advantages": torch.tensor([[0.5], [-0.3]]),
    }
    loss = policy_loss_fn(model, batch)
    loss.backward()
    return loss.detach(), model.output_layer.weight.grad


loss, head_grad = main()
