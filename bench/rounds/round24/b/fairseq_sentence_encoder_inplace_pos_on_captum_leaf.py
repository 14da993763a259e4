# label: hazard raises
# why: captum's layer hook replaces the embed_tokens output with a leaf that requires grad, and TransformerSentenceEncoder then adds the positional embeddings into it with `+=`, an in-place op on a leaf.
# source: https://github.com/facebookresearch/fairseq/commit/f2d5864b6ca7da01237e2d1d85b9227cbd6dd26f
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LearnedPositionalEmbedding(nn.Embedding):
    def __init__(self, num_embeddings, embedding_dim, padding_idx):
        super().__init__(num_embeddings, embedding_dim, padding_idx)

    def forward(self, tokens, positions=None):
        if positions is None:
            mask = tokens.ne(self.padding_idx).int()
            positions = (torch.cumsum(mask, dim=1) * mask).long() + self.padding_idx
        return super().forward(positions)


class TransformerSentenceEncoder(nn.Module):
    def __init__(self, padding_idx=1, vocab_size=20, num_encoder_layers=1,
                 embedding_dim=8, ffn_embedding_dim=16, num_attention_heads=2,
                 max_seq_len=16):
        super().__init__()
        self.padding_idx = padding_idx
        self.embed_tokens = nn.Embedding(vocab_size, embedding_dim, padding_idx)
        self.embed_positions = LearnedPositionalEmbedding(max_seq_len, embedding_dim, padding_idx)
        self.emb_layer_norm = nn.LayerNorm(embedding_dim)
        self.layers = nn.ModuleList(
            [nn.TransformerEncoderLayer(embedding_dim, num_attention_heads, ffn_embedding_dim, dropout=0.0)
             for _ in range(num_encoder_layers)]
        )

    def forward(self, tokens, positions=None):
        padding_mask = tokens.eq(self.padding_idx)
        x = self.embed_tokens(tokens)

        if self.embed_positions is not None:
            x += self.embed_positions(tokens, positions=positions)  # <-- IPL003

        x = self.emb_layer_norm(x)
        x = F.dropout(x, p=0.1, training=self.training)

        # account for padding while computing the representation
        if padding_mask is not None:
            x *= 1 - padding_mask.unsqueeze(-1).type_as(x)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=padding_mask)
        sentence_rep = x[0, :, :]
        return x, sentence_rep


def layer_integrated_gradients(model, layer, tokens, baseline_emb, n_steps=4):
    """Minimal version of captum's LayerIntegratedGradients on the embedding layer."""
    with torch.no_grad():
        actual_emb = layer(tokens)
    total_grads = torch.zeros_like(actual_emb)
    for alpha in torch.linspace(0.0, 1.0, n_steps):
        scaled_features = (baseline_emb + alpha * (actual_emb - baseline_emb)).detach()
        scaled_features.requires_grad_()

        def layer_forward_hook(module, inputs, output):
            return scaled_features

        handle = layer.register_forward_hook(layer_forward_hook)
        try:
            _, sentence_rep = model(tokens)
        finally:
            handle.remove()
        (grad,) = torch.autograd.grad(sentence_rep[:, 0].sum(), scaled_features)
        total_grads += grad
    return total_grads * (actual_emb - baseline_emb) / n_steps


def main():
    model = TransformerSentenceEncoder()
    model.eval()
    tokens = torch.tensor([[0, 5, 7, 9, 2], [0, 4, 6, 2, 1]])
    baseline = torch.zeros(2, 5, 8)
    attributions = layer_integrated_gradients(model, model.embed_tokens, tokens, baseline)
    return attributions.sum(-1)


result = main()
