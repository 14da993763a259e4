# label: hazard silent
# why: span_starts/span_ends are views split out of the caller's span_indices, so `*= span_indices_mask` rewrites the padded (-1) spans of the parser's own `spans` tensor, which it later returns and decodes
# source: https://github.com/allenai/allennlp/commit/db3ecf6716567e8eb9d5ae48bd91730b05ffb9aa
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def batched_index_select(target, indices):
    # target: (batch, seq, dim), indices: (batch, num_spans)
    batch = torch.arange(target.size(0)).unsqueeze(-1)
    return target[batch, indices]


class EndpointSpanExtractor(nn.Module):
    def __init__(self, input_dim, combination="x,y"):
        super().__init__()
        self._input_dim = input_dim
        self._combination = combination

    def forward(self, sequence_tensor, span_indices, sequence_mask=None, span_indices_mask=None):
        # shape (batch_size, num_spans)
        span_starts, span_ends = [index.squeeze(-1) for index in span_indices.split(1, dim=-1)]

        if span_indices_mask is not None:
            # It's not strictly necessary to multiply the span indices by the mask here,
            # but it's possible that the span representation was padded with something other
            # than 0 (such as -1, which would be an invalid index), so we do so anyway to
            # be safe.
            span_starts *= span_indices_mask  # <-- IPL004: span_starts is a view of the caller's span_indices (spans), which the parser keeps using
            span_ends *= span_indices_mask  # <-- IPL004: span_ends is a view of the caller's span_indices (spans), which the parser keeps using

        start_embeddings = batched_index_select(sequence_tensor, span_starts)
        end_embeddings = batched_index_select(sequence_tensor, span_ends)
        combined_tensors = torch.cat([start_embeddings, end_embeddings], -1)
        if span_indices_mask is not None:
            return combined_tensors * span_indices_mask.unsqueeze(-1).float()
        return combined_tensors


class SpanConstituencyParser(nn.Module):
    def __init__(self, vocab_size=20, dim=8, num_labels=4):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, dim)
        self.encoder = nn.LSTM(dim, dim, batch_first=True)
        self.span_extractor = EndpointSpanExtractor(dim)
        self.tag_projection_layer = nn.Linear(2 * dim, num_labels)

    def forward(self, tokens, spans, span_labels=None):
        mask = (tokens != 0).long()
        embedded_text_input = self.embedder(tokens)
        encoded_text, _ = self.encoder(embedded_text_input)
        span_mask = (spans[:, :, 0] >= 0).squeeze(-1).long()
        span_representations = self.span_extractor(encoded_text, spans, mask, span_mask)
        logits = self.tag_projection_layer(span_representations)
        class_probabilities = F.softmax(logits, dim=-1)
        output_dict = {"class_probabilities": class_probabilities, "spans": spans, "mask": span_mask}
        if span_labels is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), span_labels.view(-1), reduction="none")
            output_dict["loss"] = (loss * span_mask.view(-1).float()).sum() / span_mask.sum()
        return output_dict

    def decode(self, output_dict):
        # keep the spans that are real (non-padding) and predicted as constituents
        spans = output_dict["spans"]
        keep = (spans[:, :, 0] >= 0) & (output_dict["class_probabilities"].argmax(-1) != 0)
        return keep.sum(-1)


tokens = torch.tensor([[3, 5, 7, 2], [4, 6, 0, 0]])
spans = torch.tensor([[[0, 0], [0, 1], [1, 3], [2, 3]],
                      [[0, 0], [0, 1], [-1, -1], [-1, -1]]])
span_labels = torch.tensor([[1, 2, 0, 3], [2, 1, 0, 0]])
parser = SpanConstituencyParser()
output = parser(tokens, spans, span_labels)
output["loss"].backward()
num_kept_constituents = parser.decode(output)
returned_spans = output["spans"].clone()
