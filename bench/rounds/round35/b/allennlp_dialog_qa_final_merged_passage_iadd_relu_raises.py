# label: hazard raises
# why: DialogQA.forward computes `final_merged_passage = F.relu(self._merge_atten(...))`, feeds it to the residual self-attention encoder, then adds the result back with `final_merged_passage += residual_layer`; the in-place add rewrites the ReLU output that ReluBackward (and the residual LSTM) saved, so the span loss backward raises.
# source: https://github.com/allenai/allennlp/commit/1d27c481c0c6cfa5150a77c27560200e667821da
from typing import Dict

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def last_dim_softmax(tensor, mask):
    masked = tensor.masked_fill(mask == 0, -1e7)
    return F.softmax(masked, dim=-1)


def weighted_sum(matrix, attention):
    if attention.dim() == 2 and matrix.dim() == 3:
        return attention.unsqueeze(1).bmm(matrix).squeeze(1)
    return attention.bmm(matrix)


def replace_masked_values(tensor, mask, replace_with):
    return tensor.masked_fill((1 - mask).bool(), replace_with)


class Seq2SeqLSTM(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self._module = nn.LSTM(input_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, inputs, mask):
        outputs, _ = self._module(inputs)
        return outputs * mask.unsqueeze(-1).float()


class DialogQA(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, dropout=0.2):
        super().__init__()
        self._text_field_embedder = nn.Embedding(vocab_size, embedding_dim)
        self._phrase_layer = Seq2SeqLSTM(embedding_dim, hidden_dim)
        encoding_dim = 2 * hidden_dim
        self._merge_atten = nn.Linear(encoding_dim * 4, encoding_dim)
        self._residual_encoder = Seq2SeqLSTM(encoding_dim, hidden_dim)
        self._self_atten_weight = nn.Parameter(torch.eye(encoding_dim))
        self._merge_self_atten = nn.Linear(encoding_dim * 3, encoding_dim)
        self._span_start_encoder = Seq2SeqLSTM(encoding_dim, hidden_dim)
        self._span_end_encoder = Seq2SeqLSTM(encoding_dim * 2, hidden_dim)
        self._span_start_predictor = nn.Linear(encoding_dim, 1)
        self._span_end_predictor = nn.Linear(encoding_dim, 1)
        self._dropout = nn.Dropout(p=dropout)

    def _self_atten(self, matrix_1, matrix_2):
        return matrix_1.matmul(self._self_atten_weight).bmm(matrix_2.transpose(1, 2))

    def forward(self, question, passage, span_start, span_end) -> Dict[str, torch.Tensor]:
        batch_size, max_qa_count, max_q_len = question.size()
        total_qa_count = batch_size * max_qa_count
        question_mask = (question.view(total_qa_count, max_q_len) != 0).float()
        passage_mask = (passage != 0).float()

        embedded_question = self._dropout(self._text_field_embedder(question.view(total_qa_count, max_q_len)))
        embedded_passage = self._dropout(self._text_field_embedder(passage))
        passage_length = embedded_passage.size(1)

        repeated_passage = embedded_passage.unsqueeze(1).repeat(1, max_qa_count, 1, 1)
        repeated_passage = repeated_passage.view(total_qa_count, passage_length, -1)
        repeated_passage_mask = passage_mask.unsqueeze(1).repeat(1, max_qa_count, 1).view(total_qa_count, -1)

        encoded_question = self._dropout(self._phrase_layer(embedded_question, question_mask))
        repeated_encoded_passage = self._dropout(self._phrase_layer(repeated_passage, repeated_passage_mask))
        encoding_dim = encoded_question.size(-1)

        # Shape: (batch_size * max_qa_count, passage_length, question_length)
        passage_question_similarity = repeated_encoded_passage.bmm(encoded_question.transpose(1, 2))
        passage_question_attention = last_dim_softmax(passage_question_similarity, question_mask.unsqueeze(1))
        passage_question_vectors = weighted_sum(encoded_question, passage_question_attention)

        masked_similarity = replace_masked_values(passage_question_similarity, question_mask.unsqueeze(1), -1e7)
        passage_mask = repeated_passage_mask
        question_passage_similarity = masked_similarity.max(dim=-1)[0].squeeze(-1)
        question_passage_attention = last_dim_softmax(question_passage_similarity, passage_mask)
        question_passage_vector = weighted_sum(repeated_encoded_passage, question_passage_attention)
        tiled_question_passage_vector = question_passage_vector.unsqueeze(1).expand(total_qa_count,
                                                                                    passage_length,
                                                                                    encoding_dim)

        # Shape: (batch_size * max_qa_count, passage_length, encoding_dim * 4)
        final_merged_passage = torch.cat([repeated_encoded_passage,
                                          passage_question_vectors,
                                          repeated_encoded_passage * passage_question_vectors,
                                          repeated_encoded_passage * tiled_question_passage_vector],
                                         dim=-1)

        final_merged_passage = F.relu(self._merge_atten(final_merged_passage))

        residual_layer = self._dropout(self._residual_encoder(self._dropout(final_merged_passage), passage_mask))
        self_atten_matrix = self._self_atten(residual_layer, residual_layer)

        mask = passage_mask.reshape(total_qa_count, passage_length, 1) * passage_mask.reshape(total_qa_count, 1, passage_length)
        self_mask = torch.eye(passage_length, passage_length).reshape(1, passage_length, passage_length)
        mask = mask * (1 - self_mask)

        self_atten_probs = last_dim_softmax(self_atten_matrix, mask)

        # (batch, passage_len, passage_len) * (batch, passage_len, dim) -> (batch, passage_len, dim)
        self_atten_vecs = torch.matmul(self_atten_probs, residual_layer)

        residual_layer = F.relu(self._merge_self_atten(torch.cat([self_atten_vecs, residual_layer,
                                                                  residual_layer * self_atten_vecs],
                                                                 dim=-1)))

        final_merged_passage += residual_layer  # <-- IPL001
        final_merged_passage = self._dropout(final_merged_passage)
        start_rep = self._span_start_encoder(final_merged_passage, passage_mask)
        span_start_logits = self._span_start_predictor(start_rep).squeeze(-1)

        end_rep = self._span_end_encoder(torch.cat([final_merged_passage, start_rep], dim=-1), passage_mask)
        span_end_logits = self._span_end_predictor(end_rep).squeeze(-1)

        span_start_logits = replace_masked_values(span_start_logits, passage_mask, -1e7)
        span_end_logits = replace_masked_values(span_end_logits, passage_mask, -1e7)
        loss = F.cross_entropy(span_start_logits, span_start.view(-1))
        loss = loss + F.cross_entropy(span_end_logits, span_end.view(-1))
        return {"span_start_logits": span_start_logits, "span_end_logits": span_end_logits, "loss": loss}


model = DialogQA(vocab_size=40, embedding_dim=8, hidden_dim=6)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
question = torch.randint(1, 40, (2, 2, 4))
passage = torch.randint(1, 40, (2, 9))
span_start = torch.randint(0, 4, (2, 2))
span_end = span_start + torch.randint(0, 4, (2, 2))

model.train()
output_dict = model(question, passage, span_start, span_end)
optimizer.zero_grad()
output_dict["loss"].backward()
optimizer.step()
loss = output_dict["loss"].detach()
