# label: safe
# why: process_tokens rescales the text-encoder output z in place (z *= multipliers, z *= original_mean / new_mean), but z comes from final_layer_norm, which saves its input rather than its output, and mean() and the constant multiply save nothing of z, so the embedding gradients match the out-of-place version.
# source: https://github.com/AUTOMATIC1111/stable-diffusion-webui/pull/6465 (commit df3b31eb559ab9fabf7e513bdeddd5282c16f124)
import torch
import torch.nn as nn

torch.manual_seed(0)


class TextModel(nn.Module):
    def __init__(self, vocab=16, width=8):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, width)
        self.layer = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, width))
        self.final_layer_norm = nn.LayerNorm(width)

    def forward(self, input_ids):
        x = self.token_embedding(input_ids)
        x = x + self.layer(x)
        return self.final_layer_norm(x)


class FrozenCLIPEmbedderWithCustomWordsBase(torch.nn.Module):
    def __init__(self, wrapped):
        super().__init__()
        self.wrapped = wrapped
        self.chunk_length = 75

    def encode_with_transformers(self, tokens):
        return self.wrapped(tokens)

    def process_tokens(self, remade_batch_tokens, batch_multipliers):
        tokens = torch.asarray(remade_batch_tokens)

        z = self.encode_with_transformers(tokens)

        # restoring original mean is likely not correct, but it seems to work well to prevent artifacts that happen otherwise
        batch_multipliers = torch.asarray(batch_multipliers)
        original_mean = z.mean()
        z *= batch_multipliers.reshape(batch_multipliers.shape + (1,)).expand(z.shape)
        new_mean = z.mean()
        z *= original_mean / new_mean

        return z


def main():
    text_model = TextModel()
    embedder = FrozenCLIPEmbedderWithCustomWordsBase(text_model)
    to_k = nn.Linear(8, 8)
    tokens = [[1, 5, 7, 2], [1, 3, 2, 2]]
    multipliers = [[1.0, 1.1, 0.9, 1.0], [1.0, 1.21, 1.0, 1.0]]
    cond = embedder.process_tokens(tokens, multipliers)
    loss = to_k(cond).pow(2).mean()
    loss.backward()
    return cond.detach(), text_model.token_embedding.weight.grad, to_k.weight.grad


cond, emb_grad, to_k_grad = main()
