# label: hazard raises
# why: when captum swaps embed_tokens for an interpretable embedding that returns the attribution leaf tensor, the in-place embed_scale multiply hits a leaf that requires grad
# source: https://github.com/facebookresearch/fairseq/commit/3a979a40e66a3a4006da55809b2f4dd6bd517d20
import math
from typing import Optional, Tuple

import torch
import torch.nn as nn

torch.manual_seed(0)


class TransformerSentenceEncoderLayer(nn.Module):
    def __init__(self, embedding_dim, num_attention_heads):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(embedding_dim, num_attention_heads)
        self.self_attn_layer_norm = nn.LayerNorm(embedding_dim)
        self.fc1 = nn.Linear(embedding_dim, 2 * embedding_dim)
        self.fc2 = nn.Linear(2 * embedding_dim, embedding_dim)
        self.final_layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, x, self_attn_padding_mask=None):
        residual = x
        x, attn = self.self_attn(x, x, x, key_padding_mask=self_attn_padding_mask)
        x = self.self_attn_layer_norm(residual + x)
        residual = x
        x = self.fc2(torch.relu(self.fc1(x)))
        x = self.final_layer_norm(residual + x)
        return x, attn


class TransformerSentenceEncoder(nn.Module):
    def __init__(self, padding_idx, vocab_size, num_encoder_layers=2, embedding_dim=8,
                 num_attention_heads=2, max_seq_len=16, num_segments=2):
        super().__init__()
        self.padding_idx = padding_idx
        self.traceable = False
        self.tpu = False
        self.embed_tokens = nn.Embedding(vocab_size, embedding_dim, padding_idx)
        self.embed_scale = math.sqrt(embedding_dim)
        self.embed_positions = nn.Embedding(max_seq_len, embedding_dim)
        self.segment_embeddings = nn.Embedding(num_segments, embedding_dim) if num_segments > 0 else None
        self.quant_noise = None
        self.emb_layer_norm = nn.LayerNorm(embedding_dim)
        self.dropout_module = nn.Dropout(0.1)
        self.layers = nn.ModuleList(
            [TransformerSentenceEncoderLayer(embedding_dim, num_attention_heads) for _ in range(num_encoder_layers)]
        )

    def forward(self, tokens: torch.Tensor, segment_labels: torch.Tensor = None, last_state_only: bool = False,
                positions: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        # compute padding mask. This is needed for multi-head attention
        padding_mask = tokens.eq(self.padding_idx)
        if not self.traceable and not self.tpu and not padding_mask.any():
            padding_mask = None

        x = self.embed_tokens(tokens)

        if self.embed_scale is not None:
            x *= self.embed_scale  # <-- IPL003: x is the attribution leaf when embed_tokens is interpretable

        if self.embed_positions is not None:
            if positions is None:
                positions = torch.arange(tokens.size(1)).unsqueeze(0).expand_as(tokens)
            x += self.embed_positions(positions)

        if self.segment_embeddings is not None and segment_labels is not None:
            x += self.segment_embeddings(segment_labels)

        if self.emb_layer_norm is not None:
            x = self.emb_layer_norm(x)

        x = self.dropout_module(x)

        # account for padding while computing the representation
        if padding_mask is not None:
            x *= 1 - padding_mask.unsqueeze(-1).type_as(x)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        inner_states = []
        if not last_state_only:
            inner_states.append(x)
        for layer in self.layers:
            x, _ = layer(x, self_attn_padding_mask=padding_mask)
            if not last_state_only:
                inner_states.append(x)
        sentence_rep = x[0, :, :]
        if last_state_only:
            inner_states = [x]
        return inner_states, sentence_rep


class InterpretableEmbedding(nn.Module):
    """Stands in for the embedding layer during attribution (captum style)."""

    def __init__(self, embedding):
        super().__init__()
        self.embedding = embedding
        self.input_embeddings = None

    def indices_to_embeddings(self, tokens):
        return self.embedding(tokens)

    def forward(self, tokens):
        return self.input_embeddings


encoder = TransformerSentenceEncoder(padding_idx=1, vocab_size=20)
classifier = nn.Linear(8, 3)
encoder.eval()
tokens = torch.tensor([[0, 5, 7, 9, 1], [0, 4, 4, 2, 3]])
segment_labels = torch.zeros_like(tokens)

interpretable = InterpretableEmbedding(encoder.embed_tokens)
encoder.embed_tokens = interpretable
input_embeddings = interpretable.indices_to_embeddings(tokens).detach().requires_grad_()
interpretable.input_embeddings = input_embeddings

inner_states, sentence_rep = encoder(tokens, segment_labels)
score = classifier(sentence_rep)[:, 2].sum()
attributions, = torch.autograd.grad(score, input_embeddings)
