# label: hazard raises
# why: CogVideoXBlock adds the gated attention output to hidden_states with +=, but hidden_states (a view of the patch-embedding output) was just saved by the LayerNorm inside norm1 for its backward, so training the transformer fails in backward.
# source: https://github.com/huggingface/diffusers/commit/4bd9e991849a7b4b91b963da297956d1a01f2534
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CogVideoXLayerNormZero(nn.Module):
    def __init__(self, conditioning_dim, embedding_dim, elementwise_affine=True, eps=1e-5, bias=True):
        super().__init__()
        self.silu = nn.SiLU()
        self.linear = nn.Linear(conditioning_dim, 6 * embedding_dim, bias=bias)
        self.norm = nn.LayerNorm(embedding_dim, eps=eps, elementwise_affine=elementwise_affine)

    def forward(self, hidden_states, encoder_hidden_states, temb):
        shift, scale, gate, enc_shift, enc_scale, enc_gate = self.linear(self.silu(temb)).chunk(6, dim=1)
        hidden_states = self.norm(hidden_states) * (1 + scale)[:, None, :] + shift[:, None, :]
        encoder_hidden_states = self.norm(encoder_hidden_states) * (1 + enc_scale)[:, None, :] + enc_shift[:, None, :]
        return hidden_states, encoder_hidden_states, gate[:, None, :], enc_gate[:, None, :]


class JointAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, 3 * dim)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, hidden_states, encoder_hidden_states):
        text_seq_length = encoder_hidden_states.size(1)
        x = torch.cat([encoder_hidden_states, hidden_states], dim=1)
        B, N, C = x.shape
        q, k, v = self.to_qkv(x).view(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)
        out = self.to_out(out.transpose(1, 2).reshape(B, N, C))
        return out[:, text_seq_length:], out[:, :text_seq_length]


class FeedForward(nn.Module):
    def __init__(self, dim, inner_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, inner_dim), nn.GELU(approximate="tanh"), nn.Linear(inner_dim, dim))

    def forward(self, x):
        return self.net(x)


class CogVideoXBlock(nn.Module):
    def __init__(self, dim, num_attention_heads, time_embed_dim):
        super().__init__()
        self.norm1 = CogVideoXLayerNormZero(time_embed_dim, dim, True, 1e-5, bias=True)
        self.attn1 = JointAttention(dim, num_attention_heads)
        self.norm2 = CogVideoXLayerNormZero(time_embed_dim, dim, True, 1e-5, bias=True)
        self.ff = FeedForward(dim, 4 * dim)

    def forward(self, hidden_states, encoder_hidden_states, temb):
        text_seq_length = encoder_hidden_states.size(1)

        # norm & modulate
        norm_hidden_states, norm_encoder_hidden_states, gate_msa, enc_gate_msa = self.norm1(
            hidden_states, encoder_hidden_states, temb
        )

        # attention
        attn_hidden_states, attn_encoder_hidden_states = self.attn1(
            hidden_states=norm_hidden_states,
            encoder_hidden_states=norm_encoder_hidden_states,
        )

        hidden_states += gate_msa * attn_hidden_states  # <-- IPL001
        encoder_hidden_states += enc_gate_msa * attn_encoder_hidden_states  # <-- IPL001

        # norm & modulate
        norm_hidden_states, norm_encoder_hidden_states, gate_ff, enc_gate_ff = self.norm2(
            hidden_states, encoder_hidden_states, temb
        )

        # feed-forward
        norm_hidden_states = torch.cat([norm_encoder_hidden_states, norm_hidden_states], dim=1)
        ff_output = self.ff(norm_hidden_states)

        hidden_states += gate_ff * ff_output[:, text_seq_length:]  # <-- IPL001
        encoder_hidden_states += enc_gate_ff * ff_output[:, :text_seq_length]  # <-- IPL001

        return hidden_states, encoder_hidden_states


class CogVideoXTransformer3DModel(nn.Module):
    def __init__(self, in_channels=4, text_dim=12, dim=16, heads=2, time_embed_dim=8, num_layers=2):
        super().__init__()
        self.patch_proj = nn.Linear(in_channels, dim)
        self.text_proj = nn.Linear(text_dim, dim)
        self.time_embedding = nn.Linear(1, time_embed_dim)
        self.transformer_blocks = nn.ModuleList(
            [CogVideoXBlock(dim, heads, time_embed_dim) for _ in range(num_layers)])
        self.proj_out = nn.Linear(dim, in_channels)

    def patch_embed(self, encoder_hidden_states, hidden_states):
        return torch.cat([self.text_proj(encoder_hidden_states), self.patch_proj(hidden_states)], dim=1)

    def forward(self, hidden_states, encoder_hidden_states, timestep):
        text_seq_length = encoder_hidden_states.shape[1]
        temb = self.time_embedding(timestep[:, None].float())
        hidden_states = self.patch_embed(encoder_hidden_states, hidden_states)
        encoder_hidden_states = hidden_states[:, :text_seq_length]
        hidden_states = hidden_states[:, text_seq_length:]
        for block in self.transformer_blocks:
            hidden_states, encoder_hidden_states = block(hidden_states, encoder_hidden_states, temb)
        return self.proj_out(hidden_states)


def main():
    model = CogVideoXTransformer3DModel()
    latents = torch.randn(2, 6, 4)
    text = torch.randn(2, 3, 12)
    timestep = torch.tensor([10, 500])
    noise_pred = model(latents, text, timestep)
    loss = F.mse_loss(noise_pred, torch.randn_like(noise_pred))
    loss.backward()
    return noise_pred.detach(), model.patch_proj.weight.grad.clone()


noise_pred, grad = main()
