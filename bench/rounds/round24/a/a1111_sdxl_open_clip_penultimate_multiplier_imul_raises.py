# label: hazard raises
# why: for SDXL's OpenCLIP-G embedder encode_with_transformers returns the "penultimate" hidden state, which is the input the last resblock's ln_1 saved for backward, so process_tokens scaling z in place by the emphasis multipliers breaks backward through the last block (the pooled output depends on it).
# source: https://github.com/AUTOMATIC1111/stable-diffusion-webui/commit/8284ebd94c4d4f7e7141ebb47af206faab66ffed
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResidualAttentionBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x, attn_mask=None):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class OpenCLIPTextModel(nn.Module):
    def __init__(self, vocab=16, width=8, layers=2, ctx=6):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, width)
        self.positional_embedding = nn.Parameter(torch.randn(ctx, width) * 0.01)
        self.resblocks = nn.ModuleList([ResidualAttentionBlock(width) for _ in range(layers)])
        self.ln_final = nn.LayerNorm(width)
        self.text_projection = nn.Parameter(torch.randn(width, width) * 0.1)
        self.attn_mask = None


class FrozenOpenCLIPEmbedder2(nn.Module):
    def __init__(self, layer="penultimate"):
        super().__init__()
        self.model = OpenCLIPTextModel()
        self.layer = layer

    def pool(self, x, text):
        return x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.model.text_projection

    def text_transformer_forward(self, x, attn_mask=None):
        outputs = {}
        for i, r in enumerate(self.model.resblocks):
            if i == len(self.model.resblocks) - 1:
                outputs["penultimate"] = x.permute(1, 0, 2)  # LND -> NLD
            x = r(x, attn_mask=attn_mask)
        outputs["last"] = x.permute(1, 0, 2)  # LND -> NLD
        return outputs

    def encode_with_transformer(self, text):
        x = self.model.token_embedding(text)
        x = x + self.model.positional_embedding
        x = x.permute(1, 0, 2)  # NLD -> LND
        x = self.text_transformer_forward(x, attn_mask=self.model.attn_mask)
        o = x["last"]
        o = self.model.ln_final(o)
        pooled = self.pool(o, text)
        x["pooled"] = pooled
        return x


class FrozenOpenCLIPEmbedder2WithCustomWords(nn.Module):
    def __init__(self, wrapped):
        super().__init__()
        self.wrapped = wrapped

    def encode_with_transformers(self, tokens):
        d = self.wrapped.encode_with_transformer(tokens)
        z = d[self.wrapped.layer]

        pooled = d.get("pooled")
        if pooled is not None:
            z.pooled = pooled

        return z

    def process_tokens(self, remade_batch_tokens, batch_multipliers):
        tokens = torch.asarray(remade_batch_tokens)

        z = self.encode_with_transformers(tokens)

        pooled = getattr(z, 'pooled', None)

        # restoring original mean is likely not correct, but it seems to work well to prevent artifacts that happen otherwise
        batch_multipliers = torch.asarray(batch_multipliers)
        original_mean = z.mean()
        z *= batch_multipliers.reshape(batch_multipliers.shape + (1,)).expand(z.shape)  # <-- IPL001
        new_mean = z.mean()
        z *= (original_mean / new_mean)  # <-- IPL001

        if pooled is not None:
            z.pooled = pooled

        return z


def main():
    embedder = FrozenOpenCLIPEmbedder2WithCustomWords(FrozenOpenCLIPEmbedder2())
    tokens = [[1, 5, 7, 15, 0, 0], [1, 3, 15, 0, 0, 0]]
    multipliers = [[1.0, 1.1, 0.9, 1.0, 1.0, 1.0], [1.0, 1.21, 1.0, 1.0, 1.0, 1.0]]
    z = embedder.process_tokens(tokens, multipliers)
    loss = z.pow(2).mean() + z.pooled.pow(2).mean()
    loss.backward()
    return z.detach(), embedder.wrapped.model.token_embedding.weight.grad


cond, emb_grad = main()
