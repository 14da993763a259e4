# label: hazard raises
# why: CogView3PlusTransformerBlock adds the gated attention/FF outputs into its inputs in place (hidden_states += gate_msa * attn_hidden_states, ...), but the adaLN-Zero norm1 (and later norm2) LayerNorms saved exactly those tensors for backward, so training the DiT fails with "modified by an inplace operation".
# source: https://github.com/huggingface/diffusers/commit/2ce09f8a7f38b4476e618d8d69b9950905170073 ("removed in-place sum, may affect backward propagation logic", transformer_cogview3plus.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CogView3PlusAdaLayerNormZeroTextImage(nn.Module):
    def __init__(self, embedding_dim: int, dim: int):
        super().__init__()
        self.silu = nn.SiLU()
        self.linear = nn.Linear(embedding_dim, 12 * dim, bias=True)
        self.norm_x = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-5)
        self.norm_c = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-5)

    def forward(self, x, context, emb=None):
        emb = self.linear(self.silu(emb))
        (shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp,
         c_shift_msa, c_scale_msa, c_gate_msa, c_shift_mlp, c_scale_mlp, c_gate_mlp) = emb.chunk(12, dim=1)
        normed_x = self.norm_x(x)
        normed_context = self.norm_c(context)
        x = normed_x * (1 + scale_msa[:, None]) + shift_msa[:, None]
        context = normed_context * (1 + c_scale_msa[:, None]) + c_shift_msa[:, None]
        return x, gate_msa, shift_mlp, scale_mlp, gate_mlp, context, c_gate_msa, c_shift_mlp, c_scale_mlp, c_gate_mlp


class Attention(nn.Module):
    """Joint text-image attention as computed by CogVideoXAttnProcessor2_0."""

    def __init__(self, query_dim, heads, dim_head):
        super().__init__()
        self.heads = heads
        inner = heads * dim_head
        self.to_q = nn.Linear(query_dim, inner)
        self.to_k = nn.Linear(query_dim, inner)
        self.to_v = nn.Linear(query_dim, inner)
        self.norm_q = nn.LayerNorm(dim_head, elementwise_affine=False, eps=1e-6)
        self.norm_k = nn.LayerNorm(dim_head, elementwise_affine=False, eps=1e-6)
        self.to_out = nn.Linear(inner, query_dim)

    def forward(self, hidden_states, encoder_hidden_states):
        text_seq_length = encoder_hidden_states.size(1)
        hidden_states = torch.cat([encoder_hidden_states, hidden_states], dim=1)
        b, n, _ = hidden_states.shape
        q = self.to_q(hidden_states).view(b, n, self.heads, -1).transpose(1, 2)
        k = self.to_k(hidden_states).view(b, n, self.heads, -1).transpose(1, 2)
        v = self.to_v(hidden_states).view(b, n, self.heads, -1).transpose(1, 2)
        q, k = self.norm_q(q), self.norm_k(k)
        out = F.scaled_dot_product_attention(q, k, v)
        out = self.to_out(out.transpose(1, 2).reshape(b, n, -1))
        encoder_hidden_states, hidden_states = out.split([text_seq_length, n - text_seq_length], dim=1)
        return hidden_states, encoder_hidden_states


class FeedForward(nn.Module):
    def __init__(self, dim, dim_out, mult=2):
        super().__init__()
        self.net = nn.ModuleList([nn.Linear(dim, dim * mult), nn.GELU(approximate="tanh"), nn.Linear(dim * mult, dim_out)])

    def forward(self, hidden_states):
        for module in self.net:
            hidden_states = module(hidden_states)
        return hidden_states


class CogView3PlusTransformerBlock(nn.Module):
    def __init__(self, dim=16, num_attention_heads=2, attention_head_dim=8, time_embed_dim=12):
        super().__init__()
        self.norm1 = CogView3PlusAdaLayerNormZeroTextImage(embedding_dim=time_embed_dim, dim=dim)
        self.attn1 = Attention(query_dim=dim, heads=num_attention_heads, dim_head=attention_head_dim)
        self.norm2 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-5)
        self.norm2_context = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-5)
        self.ff = FeedForward(dim=dim, dim_out=dim)

    def forward(self, hidden_states, encoder_hidden_states, emb):
        text_seq_length = encoder_hidden_states.size(1)

        # norm & modulate
        (norm_hidden_states, gate_msa, shift_mlp, scale_mlp, gate_mlp,
         norm_encoder_hidden_states, c_gate_msa, c_shift_mlp, c_scale_mlp, c_gate_mlp) = self.norm1(
            hidden_states, encoder_hidden_states, emb)

        # attention
        attn_hidden_states, attn_encoder_hidden_states = self.attn1(
            hidden_states=norm_hidden_states, encoder_hidden_states=norm_encoder_hidden_states)

        hidden_states += gate_msa.unsqueeze(1) * attn_hidden_states  # <-- IPL001
        encoder_hidden_states += c_gate_msa.unsqueeze(1) * attn_encoder_hidden_states  # <-- IPL001

        # norm & modulate
        norm_hidden_states = self.norm2(hidden_states)
        norm_hidden_states = norm_hidden_states * (1 + scale_mlp[:, None]) + shift_mlp[:, None]
        norm_encoder_hidden_states = self.norm2_context(encoder_hidden_states)
        norm_encoder_hidden_states = norm_encoder_hidden_states * (1 + c_scale_mlp[:, None]) + c_shift_mlp[:, None]

        # feed-forward
        norm_hidden_states = torch.cat([norm_encoder_hidden_states, norm_hidden_states], dim=1)
        ff_output = self.ff(norm_hidden_states)

        hidden_states += gate_mlp.unsqueeze(1) * ff_output[:, text_seq_length:]  # <-- IPL001
        encoder_hidden_states += c_gate_mlp.unsqueeze(1) * ff_output[:, :text_seq_length]  # <-- IPL001
        return hidden_states, encoder_hidden_states


def main():
    proj_in = nn.Linear(4, 16)
    text_proj = nn.Linear(6, 16)
    block = CogView3PlusTransformerBlock()
    latents = torch.randn(2, 9, 4)
    prompt_embeds = torch.randn(2, 3, 6)
    emb = torch.randn(2, 12)
    hidden_states = proj_in(latents)
    encoder_hidden_states = text_proj(prompt_embeds)
    hidden_states, encoder_hidden_states = block(hidden_states, encoder_hidden_states, emb)
    loss = hidden_states.pow(2).mean() + 0.1 * encoder_hidden_states.pow(2).mean()
    loss.backward()
    return loss.detach(), proj_in.weight.grad


loss, grad = main()
