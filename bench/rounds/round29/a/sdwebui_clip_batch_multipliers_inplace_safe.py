# label: safe
# why: z is the output of the CLIP final LayerNorm (which saves its input, not its output) and the two `z *=` emphasis rescales save only the multiplier and a correctly versioned self, so the textual-inversion embedding still gets the right gradient.
# source: https://github.com/lllyasviel/stable-diffusion-webui-forge/commit/df3b31eb559ab9fabf7e513bdeddd5282c16f124 (pre-fix modules/sd_hijack_clip.py, process_tokens)
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyCLIPTextModel(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, dim)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.final_layer_norm = nn.LayerNorm(dim)

    def forward(self, input_ids):
        h = self.token_embedding(input_ids)
        h = h + self.encoder(h)
        return self.final_layer_norm(h)


class FrozenCLIPEmbedderWithCustomWordsBase(nn.Module):
    def __init__(self, wrapped):
        super().__init__()
        self.wrapped = wrapped
        self.id_end = 31
        self.id_pad = 0

    def encode_with_transformers(self, tokens):
        return self.wrapped(tokens)

    def process_tokens(self, remade_batch_tokens, batch_multipliers):
        tokens = torch.asarray(remade_batch_tokens)

        if self.id_end != self.id_pad:
            for batch_pos in range(len(remade_batch_tokens)):
                index = remade_batch_tokens[batch_pos].index(self.id_end)
                tokens[batch_pos, index + 1:tokens.shape[1]] = self.id_pad

        z = self.encode_with_transformers(tokens)

        batch_multipliers = torch.asarray(batch_multipliers)
        original_mean = z.mean()
        z *= batch_multipliers.reshape(batch_multipliers.shape + (1,)).expand(z.shape)
        new_mean = z.mean()
        z *= original_mean / new_mean

        return z


def main():
    text_model = TinyCLIPTextModel()
    for p in text_model.parameters():
        p.requires_grad_(False)
    text_model.token_embedding.weight.requires_grad_(True)  # textual inversion trains the embedding table
    embedder = FrozenCLIPEmbedderWithCustomWordsBase(text_model)
    remade_batch_tokens = [[1, 5, 7, 9, 31, 4, 4, 4], [1, 3, 31, 4, 4, 4, 4, 4]]
    batch_multipliers = [[1.0, 1.1, 1.21, 1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]
    z = embedder.process_tokens(remade_batch_tokens, batch_multipliers)
    target = torch.randn_like(z)
    loss = ((z - target) ** 2).mean()
    loss.backward()
    return z.detach(), text_model.token_embedding.weight.grad.clone()


z, grad = main()
