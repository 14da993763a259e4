# label: safe
# why: the fixed _deepstack_process clones the checkpointed layer output first, so the masked in-place write lands in a private copy that no backward node depends on.
# source: https://github.com/huggingface/transformers/pull/41535
import torch
import torch.nn as nn
import torch.utils.checkpoint

torch.manual_seed(0)


class Qwen3VLMoeTextSparseMoeBlock(nn.Module):
    def __init__(self, hidden_size, num_experts=2):
        super().__init__()
        self.gate = nn.Linear(hidden_size, num_experts, bias=False)
        self.experts = nn.ModuleList([nn.Linear(hidden_size, hidden_size) for _ in range(num_experts)])

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.reshape(-1, hidden_dim)
        routing_weights = torch.softmax(self.gate(hidden_states), dim=-1)
        final_hidden_states = torch.zeros_like(hidden_states)
        for expert_idx, expert in enumerate(self.experts):
            final_hidden_states = final_hidden_states + routing_weights[:, expert_idx, None] * expert(hidden_states)
        padded = torch.cat([final_hidden_states, final_hidden_states.new_zeros(1, hidden_dim)], dim=0)
        return padded[: batch_size * sequence_length].view(batch_size, sequence_length, hidden_dim)


class Qwen3VLMoeTextDecoderLayer(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden_size)
        self.self_attn = nn.Linear(hidden_size, hidden_size)
        self.mlp = Qwen3VLMoeTextSparseMoeBlock(hidden_size)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = residual + self.self_attn(self.input_layernorm(hidden_states))
        return self.mlp(hidden_states)


class Qwen3VLMoeTextModel(nn.Module):
    def __init__(self, vocab_size=13, hidden_size=8, num_layers=3):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleList([Qwen3VLMoeTextDecoderLayer(hidden_size) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(hidden_size)
        self.gradient_checkpointing = True

    def forward(self, input_ids, visual_pos_masks=None, deepstack_visual_embeds=None):
        hidden_states = self.embed_tokens(input_ids)
        for layer_idx, decoder_layer in enumerate(self.layers):
            if self.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(decoder_layer, hidden_states, use_reentrant=True)
            else:
                hidden_states = decoder_layer(hidden_states)
            # add visual features to the hidden states of first several layers
            if deepstack_visual_embeds is not None and layer_idx in range(len(deepstack_visual_embeds)):
                hidden_states = self._deepstack_process(
                    hidden_states, visual_pos_masks, deepstack_visual_embeds[layer_idx]
                )
        return self.norm(hidden_states)

    def _deepstack_process(self, hidden_states, visual_pos_masks, visual_embeds):
        visual_pos_masks = visual_pos_masks.to(hidden_states.device)
        visual_embeds = visual_embeds.to(hidden_states.device, hidden_states.dtype)
        hidden_states = hidden_states.clone()
        local_this = hidden_states[visual_pos_masks, :] + visual_embeds
        hidden_states[visual_pos_masks, :] = local_this
        return hidden_states


model = Qwen3VLMoeTextModel()
model.train()
input_ids = torch.randint(0, 13, (2, 6))
visual_pos_masks = torch.zeros(2, 6, dtype=torch.bool)
visual_pos_masks[:, 1:3] = True
deepstack_visual_embeds = [torch.randn(4, 8, requires_grad=True) for _ in range(2)]
out = model(input_ids, visual_pos_masks, deepstack_visual_embeds)
loss = out.pow(2).mean()
loss.backward()
