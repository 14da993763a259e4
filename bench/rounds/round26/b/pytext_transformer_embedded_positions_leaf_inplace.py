# label: hazard raises
# why: a Captum-style layer hook replaces the token embedding output with a leaf that requires grad, and Transformer.forward then does embedded += embedded_positions on that leaf.
# source: https://github.com/facebookresearch/pytext/commit/94908e8bb3908c4445b324d70cd3ab5537458b1d
import torch
from torch import nn

torch.manual_seed(0)


class PositionalEmbedding(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, pad_index):
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim, pad_index)
        self.pad_index = pad_index

    def forward(self, input):
        positions = torch.cumsum(input.ne(self.pad_index), dim=1) * input.ne(self.pad_index)
        return self.embedding(positions + self.pad_index)


class Transformer(nn.Module):
    def __init__(self, vocab_size=20, embedding_dim=8, padding_idx=1, max_seq_len=16):
        super().__init__()
        self.padding_idx = padding_idx
        self.token_embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx)
        self.positional_embedding = PositionalEmbedding(max_seq_len, embedding_dim, padding_idx)
        self.embedding_layer_norm = nn.LayerNorm(embedding_dim)
        self.output = nn.Linear(embedding_dim, 2)

    def forward(self, tokens):
        # compute padding mask. This is needed for multi-head attention
        padding_mask = tokens.eq(self.padding_idx)
        embedded = self.token_embedding(tokens)
        embedded_positions = self.positional_embedding(tokens)
        embedded += embedded_positions  # <-- IPL003
        normed = self.embedding_layer_norm(embedded)
        normed = normed.masked_fill(padding_mask.unsqueeze(-1), 0.0)
        return self.output(normed.mean(dim=1))


def layer_attribution_hook(scaled_inputs):
    # Captum's LayerIntegratedGradients swaps the layer output for the scaled
    # baseline->input path, which is a fresh leaf tensor requiring grad.
    def hook(module, inputs, output):
        return scaled_inputs

    return hook


def main():
    model = Transformer()
    tokens = torch.tensor([[5, 6, 7, 1], [8, 9, 1, 1]])
    with torch.no_grad():
        inputs_embeds = model.token_embedding(tokens)
    alpha = 0.5
    scaled_inputs = (alpha * inputs_embeds).requires_grad_()
    handle = model.token_embedding.register_forward_hook(layer_attribution_hook(scaled_inputs))
    logits = model(tokens)
    handle.remove()
    grads = torch.autograd.grad(logits[:, 1].sum(), scaled_inputs)[0]
    return logits.detach(), grads


logits, attribution_grads = main()
