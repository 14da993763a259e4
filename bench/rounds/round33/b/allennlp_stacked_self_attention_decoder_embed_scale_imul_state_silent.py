# label: hazard silent
# why: StackedSelfAttentionDecoderNet.forward scales its input with `previous_steps_predictions *= self._embed_scale`; at inference AutoRegressiveSeqDecoder._prepare_output_projections passes the accumulated step embeddings and then stores that same tensor back in `state["previous_steps_predictions"]`, so every decoding step multiplies the history by sqrt(d) again and the logits blow up (commit: "In place operator changes embedding matrix during inference", fixed by an out-of-place multiply).
# source: https://github.com/allenai/allennlp/commit/6ca2a83cb400a9d7a2d2a37cbf4defe90f4ee040
import copy
import math
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def subsequent_mask(size: int, device: str = 'cpu') -> torch.Tensor:
    """Mask out subsequent positions."""
    mask = torch.tril(torch.ones(size, size, device=device, dtype=torch.int32)).unsqueeze(0)
    return mask


class PositionalEncoding(nn.Module):
    """Implement the Positional Encoding function."""

    def __init__(self, input_dim: int, max_len: int = 5000) -> None:
        super().__init__()
        positional_encoding = torch.zeros(max_len, input_dim, requires_grad=False)
        position = torch.arange(0, max_len).unsqueeze(1).float()
        div_term = torch.exp(torch.arange(0, input_dim, 2).float() * -(math.log(10000.0) / input_dim))
        positional_encoding[:, 0::2] = torch.sin(position * div_term)
        positional_encoding[:, 1::2] = torch.cos(position * div_term)
        positional_encoding = positional_encoding.unsqueeze(0)
        self.register_buffer('positional_encoding', positional_encoding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.positional_encoding[:, :x.size(1)]


def clones(module, N):
    "Produce N identical layers."
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


class DecoderLayer(nn.Module):
    "Decoder is made of self-attn, src-attn, and feed forward"
    def __init__(self, size: int, heads: int, ff_dim: int):
        super().__init__()
        self.size = size
        self.self_attn = nn.MultiheadAttention(size, heads, batch_first=True)
        self.src_attn = nn.MultiheadAttention(size, heads, batch_first=True)
        self.feed_forward = nn.Sequential(nn.Linear(size, ff_dim), nn.ReLU(), nn.Linear(ff_dim, size))
        self.norms = clones(nn.LayerNorm(size), 3)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor, tgt_mask: torch.Tensor):
        y = self.norms[0](x)
        x = x + self.self_attn(y, y, y, attn_mask=~tgt_mask[0].bool())[0]
        y = self.norms[1](x)
        x = x + self.src_attn(y, memory, memory, key_padding_mask=~src_mask[:, 0].bool())[0]
        return x + self.feed_forward(self.norms[2](x))


class Decoder(nn.Module):
    "Generic N layer decoder with masking."
    def __init__(self, layer, N):
        super().__init__()
        self.layers = clones(layer, N)
        self.norm = nn.LayerNorm(layer.size)

    def forward(self, x, memory, src_mask, tgt_mask):
        for layer in self.layers:
            x = layer(x, memory, src_mask, tgt_mask)
        return self.norm(x)


class StackedSelfAttentionDecoderNet(nn.Module):
    def __init__(self, decoding_dim: int, feedforward_hidden_dim: int, num_layers: int, num_attention_heads: int,
                 use_positional_encoding: bool = True, positional_encoding_max_steps: int = 5000, dropout_prob: float = 0.1):
        super().__init__()
        self.decodes_parallel = True
        self._embed_scale = math.sqrt(decoding_dim)
        self._positional_embedder = PositionalEncoding(decoding_dim, positional_encoding_max_steps) if use_positional_encoding else None
        self._dropout = nn.Dropout(dropout_prob)
        self._self_attn_decoder = Decoder(DecoderLayer(decoding_dim, num_attention_heads, feedforward_hidden_dim), num_layers)

    def forward(self,
                previous_state: Dict[str, torch.Tensor],
                encoder_outputs: torch.Tensor,
                previous_steps_predictions: torch.Tensor,
                source_mask: torch.Tensor,
                previous_steps_mask: Optional[torch.Tensor] = None,
    ) -> Tuple[Dict[str, torch.Tensor], torch.Tensor]:

        source_mask = source_mask.unsqueeze(-2)
        future_mask = subsequent_mask(previous_steps_predictions.size(-2), device=source_mask.device).type_as(source_mask.data)
        if previous_steps_mask is None:
            previous_steps_mask = future_mask
        else:
            previous_steps_mask = previous_steps_mask.unsqueeze(-2) & future_mask
        previous_steps_predictions *= self._embed_scale  # <-- IPL004
        if self._positional_embedder:
            previous_steps_predictions = self._positional_embedder(previous_steps_predictions)
        previous_steps_predictions = self._dropout(previous_steps_predictions)
        decoded = self._self_attn_decoder(
            previous_steps_predictions,
            encoder_outputs,
            source_mask,
            previous_steps_mask
        )
        return {}, decoded


class AutoRegressiveSeqDecoder(nn.Module):
    def __init__(self, num_classes: int, decoder_net: StackedSelfAttentionDecoderNet, target_embedding_dim: int,
                 start_index: int = 1, max_decoding_steps: int = 8):
        super().__init__()
        self._decoder_net = decoder_net
        self.target_embedder = nn.Embedding(num_classes, target_embedding_dim)
        self._output_projection_layer = nn.Linear(target_embedding_dim, num_classes)
        self._start_index = start_index
        self._max_decoding_steps = max_decoding_steps

    def _prepare_output_projections(
            self,
            last_predictions: torch.Tensor,
            state: Dict[str, torch.Tensor]
    ) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        # shape: (group_size, max_input_sequence_length, encoder_output_dim)
        encoder_outputs = state["encoder_outputs"]

        # shape: (group_size, max_input_sequence_length)
        source_mask = state["source_mask"]

        # shape: (group_size, steps_count, decoder_output_dim)
        previous_steps_predictions = state.get("previous_steps_predictions")

        # shape: (batch_size, 1, target_embedding_dim)
        last_predictions_embeddings = self.target_embedder(last_predictions).unsqueeze(1)

        if previous_steps_predictions is None or previous_steps_predictions.shape[-1] == 0:
            # There is no previous steps, except for start vectors in ``last_predictions``
            # shape: (group_size, 1, target_embedding_dim)
            previous_steps_predictions = last_predictions_embeddings
        else:
            # shape: (group_size, steps_count, target_embedding_dim)
            previous_steps_predictions = torch.cat([previous_steps_predictions, last_predictions_embeddings], 1)

        decoder_state, decoder_output = self._decoder_net(
            previous_steps_predictions=previous_steps_predictions,
            encoder_outputs=encoder_outputs,
            source_mask=source_mask,
            previous_state=state
        )

        state["previous_steps_predictions"] = previous_steps_predictions

        # Update state with new decoder state, override previous state
        state.update(decoder_state)

        if self._decoder_net.decodes_parallel:
            decoder_output = decoder_output[:, -1, :]

        # shape: (group_size, num_classes)
        output_projections = self._output_projection_layer(decoder_output)

        return output_projections, state

    def greedy_decode(self, state: Dict[str, torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        batch_size = state["source_mask"].size(0)
        last_predictions = state["source_mask"].new_full((batch_size,), fill_value=self._start_index)
        step_logits: List[torch.Tensor] = []
        predictions: List[torch.Tensor] = []
        for timestep in range(self._max_decoding_steps):
            output_projections, state = self._prepare_output_projections(last_predictions, state)
            step_logits.append(output_projections.unsqueeze(1))
            _, last_predictions = torch.max(output_projections, 1)
            predictions.append(last_predictions)
        return torch.cat(step_logits, 1), torch.stack(predictions, 1)


def main():
    decoder_net = StackedSelfAttentionDecoderNet(decoding_dim=16, feedforward_hidden_dim=32, num_layers=2,
                                                 num_attention_heads=2, dropout_prob=0.0)
    decoder = AutoRegressiveSeqDecoder(num_classes=12, decoder_net=decoder_net, target_embedding_dim=16)
    decoder.eval()
    with torch.no_grad():
        encoder_outputs = torch.randn(3, 5, 16)
        source_mask = torch.ones(3, 5, dtype=torch.long)
        state = {"encoder_outputs": encoder_outputs, "source_mask": source_mask}
        logits, predictions = decoder.greedy_decode(state)
        history = state["previous_steps_predictions"]
    return logits, predictions, history


logits, predictions, history = main()
