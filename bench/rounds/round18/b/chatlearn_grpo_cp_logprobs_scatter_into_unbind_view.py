# label: hazard raises
# why: the context-parallel logprob gather scatters each rank's shard into rows obtained by iterating (unbinding) a zeros buffer, and an in-place scatter_ of grad-carrying logprobs into such a multi-output view is rejected by autograd
# source: https://github.com/alibaba/ChatLearn/pull/361
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FakeMPU:
    """Single-process stand-in for megatron.core.parallel_state."""

    def __init__(self, cp_size):
        self.cp_size = cp_size

    def get_context_parallel_world_size(self):
        return self.cp_size

    def get_context_parallel_group(self):
        return None


mpu = FakeMPU(cp_size=2)


def reduce_from_tensor_model_parallel_region(tensor, group=None):
    return tensor  # all-reduce over the CP group; identity on a single process


def _reduce_from_tensor_model_parallel_region(output_on_this_cp_rank: torch.Tensor, seq_indices: torch.Tensor):
    cp_size = mpu.get_context_parallel_world_size()
    cp_group = mpu.get_context_parallel_group()
    mbs, length = output_on_this_cp_rank.shape[:2]
    output = torch.zeros(mbs, length * cp_size, *output_on_this_cp_rank.shape[2:], device=output_on_this_cp_rank.device)
    for shard_output, indices, full_output in zip(output_on_this_cp_rank, seq_indices, output):
        full_output.scatter_(0, indices.to(torch.int64), shard_output)  # <-- IPL001: full_output is an unbind view of the zeros buffer
    reduce_from_tensor_model_parallel_region(output, group=cp_group)
    return output


def gather_logprobs(logits, labels):
    return torch.gather(F.log_softmax(logits, dim=-1), -1, labels.unsqueeze(-1)).squeeze(-1)


class TinyPolicy(nn.Module):
    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.lm_head(torch.tanh(self.proj(self.emb(tokens))))


def grpo_loss(logprobs, old_logprobs, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logprobs - old_logprobs)
    surr1 = ratio * advantages.unsqueeze(-1)
    surr2 = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages.unsqueeze(-1)
    return -(torch.min(surr1, surr2) * mask).sum() / mask.sum()


policy = TinyPolicy()
mbs, seq_len, cp = 2, 6, mpu.get_context_parallel_world_size()
tokens = torch.randint(0, 16, (mbs, seq_len + 1))
# load-balanced CP split: rank 0 holds positions [0,1,4], rank 1 holds [2,3,5] (we simulate rank 0 and rank 1)
positions_per_rank = [torch.tensor([0, 1, 4]), torch.tensor([2, 3, 5])]
shards = []
entropies = []
for rank in range(cp):
    pos = positions_per_rank[rank]
    logits = policy(tokens[:, pos])
    entropies.append(-(F.softmax(logits, -1) * F.log_softmax(logits, -1)).sum(-1).mean())
    shards.append((gather_logprobs(logits, tokens[:, pos + 1]), pos.unsqueeze(0).expand(mbs, -1)))

rank0_logprobs, rank0_positions = shards[0]
full_logprobs = _reduce_from_tensor_model_parallel_region(rank0_logprobs, rank0_positions)
full_logprobs = full_logprobs + _reduce_from_tensor_model_parallel_region(*shards[1])

old_logprobs = full_logprobs.detach() + 0.05 * torch.randn(mbs, seq_len)
advantages = torch.tensor([1.0, -0.5])
loss = grpo_loss(full_logprobs, old_logprobs, advantages, torch.ones(mbs, seq_len)) - 0.01 * torch.stack(entropies).mean()
loss.backward()
