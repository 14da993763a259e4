# label: safe
# why: the fix multiplies the penultimate hidden states by the attention mask out of place, so the tensor that the last CLIP layer's layer_norm1 saved for backward keeps its value and the masked copy is a new tensor.
# source: https://github.com/Nerogar/OneTrainer/commit/08765f8ea5f59e0ba37212271c281e7f8baf41eb
from types import SimpleNamespace

import torch
import torch.nn as nn

torch.manual_seed(0)


class CLIPEncoderLayer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(width)
        self.self_attn = nn.Linear(width, width)
        self.layer_norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.layer_norm1(hidden_states)
        hidden_states = residual + self.self_attn(hidden_states)
        residual = hidden_states
        hidden_states = residual + self.mlp(self.layer_norm2(hidden_states))
        return hidden_states


class CLIPTextModelWithProjection(nn.Module):
    def __init__(self, vocab=16, width=8, layers=2, proj=6):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList([CLIPEncoderLayer(width) for _ in range(layers)])
        self.text_model = SimpleNamespace(final_layer_norm=nn.LayerNorm(width))
        self.final_layer_norm = self.text_model.final_layer_norm
        self.text_projection = nn.Linear(width, proj, bias=False)

    def forward(self, tokens, attention_mask=None, return_dict=True, output_hidden_states=True):
        hidden_states = self.token_embedding(tokens)
        all_hidden_states = (hidden_states,)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
            all_hidden_states = all_hidden_states + (hidden_states,)
        last_hidden_state = self.final_layer_norm(hidden_states)
        pooled_output = last_hidden_state[torch.arange(tokens.shape[0]), tokens.argmax(dim=-1)]
        return SimpleNamespace(text_embeds=self.text_projection(pooled_output), hidden_states=all_hidden_states)


def encode_clip(text_encoder, tokens=None, default_layer=0, layer_skip=0, add_output=True, text_encoder_output=None,
                add_pooled_output=False, pooled_text_encoder_output=None, use_attention_mask=True,
                attention_mask=None, add_layer_norm=True):
    if (add_output and text_encoder_output is None) \
            or (add_pooled_output and pooled_text_encoder_output is None) \
            and text_encoder is not None:
        text_encoder_output = text_encoder(
            tokens,
            attention_mask=attention_mask if use_attention_mask else None,
            return_dict=True,
            output_hidden_states=True,
        )
        pooled_text_encoder_output = None
        if add_pooled_output:
            if hasattr(text_encoder_output, "text_embeds"):
                pooled_text_encoder_output = text_encoder_output.text_embeds
        text_encoder_output = text_encoder_output.hidden_states[default_layer - layer_skip] if add_output else None
        if add_layer_norm and text_encoder_output is not None:
            final_layer_norm = text_encoder.text_model.final_layer_norm
            text_encoder_output = final_layer_norm(text_encoder_output)
    return text_encoder_output, pooled_text_encoder_output


class StableDiffusion3Model:
    def __init__(self):
        self.text_encoder_1 = CLIPTextModelWithProjection(width=8, proj=6)
        self.text_encoder_2 = CLIPTextModelWithProjection(width=12, proj=6)

    def encode_text(self, tokens_1, tokens_2, tokens_mask_1, tokens_mask_2, apply_attention_mask=False):
        text_encoder_1_output, pooled_text_encoder_1_output = encode_clip(
            text_encoder=self.text_encoder_1, tokens=tokens_1, default_layer=-2, layer_skip=0,
            add_pooled_output=True, use_attention_mask=False, add_layer_norm=False,
        )
        text_encoder_2_output, pooled_text_encoder_2_output = encode_clip(
            text_encoder=self.text_encoder_2, tokens=tokens_2, default_layer=-2, layer_skip=0,
            add_pooled_output=True, use_attention_mask=False, add_layer_norm=False,
        )

        if apply_attention_mask:
            text_encoder_1_output = text_encoder_1_output * tokens_mask_1[:, :, None]
            text_encoder_2_output = text_encoder_2_output * tokens_mask_2[:, :, None]

        # build the conditioning tensor
        prompt_embedding = torch.concat([text_encoder_1_output, text_encoder_2_output], dim=-1)
        pooled_prompt_embedding = torch.cat([pooled_text_encoder_1_output, pooled_text_encoder_2_output], dim=-1)
        return prompt_embedding, pooled_prompt_embedding


def main():
    model = StableDiffusion3Model()
    tokens = torch.tensor([[1, 4, 9, 15, 0, 0], [1, 7, 15, 0, 0, 0]])
    tokens_mask = (torch.arange(6)[None, :] <= tokens.argmax(dim=-1)[:, None]).float()
    prompt_embedding, pooled_prompt_embedding = model.encode_text(tokens, tokens, tokens_mask, tokens_mask,
                                                                  apply_attention_mask=True)
    loss = prompt_embedding.pow(2).mean() + pooled_prompt_embedding.pow(2).mean()
    loss.backward()
    return (prompt_embedding.detach(), model.text_encoder_1.token_embedding.weight.grad,
            model.text_encoder_2.layers[1].layer_norm1.weight.grad)


prompt_embedding, te1_emb_grad, te2_ln_grad = main()
