# label: safe
# why: chosen and rejected sequences are concatenated and scored in one forward pass, so the DDP-style in-place buffer broadcast runs before the only forward and never touches a mask view that a pending backward has saved.
# source: https://github.com/huggingface/trl/issues/1345
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GPT2Attention(nn.Module):
    def __init__(self, embed_dim=8, num_heads=2, max_positions=16):
        super().__init__()
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions
            ),
        )
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.c_attn = nn.Linear(embed_dim, 3 * embed_dim)
        self.c_proj = nn.Linear(embed_dim, embed_dim)

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (self.num_heads, self.head_dim)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2)) / (value.size(-1) ** 0.5)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(hidden_states.size(-1), dim=2)
        query, key, value = self._split_heads(query), self._split_heads(key), self._split_heads(value)
        attn_output = self._attn(query, key, value)
        attn_output = attn_output.permute(0, 2, 1, 3).flatten(2)
        return self.c_proj(attn_output)


class GPT2RewardModel(nn.Module):
    def __init__(self, vocab_size=50, embed_dim=8):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, embed_dim)
        self.attn = GPT2Attention(embed_dim)
        self.v_head = nn.Linear(embed_dim, 1)

    def forward(self, input_ids):
        hidden = self.wte(input_ids)
        hidden = hidden + self.attn(hidden)
        return self.v_head(hidden[:, -1]).squeeze(-1)


class BroadcastBuffersDDP(nn.Module):
    """What DistributedDataParallel(broadcast_buffers=True) does to buffers before each forward."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self._rank0_buffers = [b.clone() for b in module.buffers()]

    def _sync_buffers(self):
        with torch.no_grad():
            for buf, src in zip(self.module.buffers(), self._rank0_buffers):
                buf.copy_(src)

    def forward(self, *inputs):
        self._sync_buffers()
        return self.module(*inputs)


def compute_loss(model, inputs):
    batch_size = inputs["input_ids_j"].size(0)
    rewards = model(torch.cat([inputs["input_ids_j"], inputs["input_ids_k"]], dim=0))
    rewards_j, rewards_k = rewards[:batch_size], rewards[batch_size:]
    loss = -F.logsigmoid(rewards_j - rewards_k).mean()
    return loss


def main():
    model = BroadcastBuffersDDP(GPT2RewardModel())
    inputs = {
        "input_ids_j": torch.randint(0, 50, (2, 6)),
        "input_ids_k": torch.randint(0, 50, (2, 6)),
    }
    loss = compute_loss(model, inputs)
    loss.backward()
    return loss.detach(), model.module.v_head.weight.grad


loss_value, v_head_grad = main()
