# label: hazard silent
# why: WikiTablesSemanticParser.forward starts `linking_scores = question_table_similarity_max_score` and adds the linking features with `linking_scores += feature_scores`, which also rewrites the max-similarity tensor; the decoding outputs then report `similarity_scores` that already contain the feature scores (the commit switches to `linking_scores = linking_scores + feature_scores`).
# source: https://github.com/allenai/allennlp/commit/3040dd27615bcd499a9f36701f436f66fb9a61f7
from typing import Dict

import torch
import torch.nn.functional as F

torch.manual_seed(0)


def get_text_field_mask(tokens: torch.LongTensor) -> torch.Tensor:
    return (tokens != 0).long()


def masked_softmax(vector, mask):
    result = F.softmax(vector * mask, dim=-1)
    result = result * mask
    return result / (result.sum(dim=-1, keepdim=True) + 1e-13)


def weighted_sum(matrix, attention):
    return attention.bmm(matrix)


class WikiTablesSemanticParser(torch.nn.Module):
    def __init__(self, vocab_size: int, embedding_dim: int, num_entity_types: int, num_linking_features: int,
                 num_actions: int, action_embedding_dim: int) -> None:
        super().__init__()
        self._question_embedder = torch.nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self._embedding_dim = embedding_dim
        self._type_params = torch.nn.Linear(num_entity_types, embedding_dim)
        self._linking_params = torch.nn.Linear(num_linking_features, 1)
        self._encoder = torch.nn.LSTM(2 * embedding_dim, embedding_dim, batch_first=True)
        self._action_embedder = torch.nn.Embedding(num_actions, action_embedding_dim)
        self._output_projection = torch.nn.Linear(embedding_dim, action_embedding_dim)

    def _get_linking_probabilities(self, linking_scores: torch.FloatTensor, question_mask: torch.LongTensor,
                                   entity_mask: torch.LongTensor) -> torch.FloatTensor:
        # (batch_size, num_question_tokens, num_entities)
        probabilities = masked_softmax(linking_scores, entity_mask.unsqueeze(1).float())
        return probabilities * question_mask.unsqueeze(-1).float()

    def forward(self, question: torch.LongTensor, table_tokens: torch.LongTensor, entity_types: torch.LongTensor,
                linking_features: torch.FloatTensor, target_action: torch.LongTensor = None) -> Dict[str, torch.Tensor]:
        embedded_question = self._question_embedder(question)
        question_mask = get_text_field_mask(question)
        embedded_table = self._question_embedder(table_tokens)
        entity_mask = get_text_field_mask(table_tokens[:, :, 0])

        batch_size, num_entities, num_entity_tokens, _ = embedded_table.size()
        num_question_tokens = embedded_question.size(1)

        entity_type_embeddings = self._type_params(F.one_hot(entity_types, self._type_params.in_features).float())
        # (batch_size, num_entities, embedding_dim)
        entity_embeddings = torch.tanh(entity_type_embeddings)

        # Compute entity and question word similarity through a dot product.
        question_table_similarity = torch.bmm(embedded_table.view(batch_size,
                                                                  num_entities * num_entity_tokens,
                                                                  self._embedding_dim),
                                              torch.transpose(embedded_question, 1, 2))
        question_table_similarity = question_table_similarity.view(batch_size,
                                                                   num_entities,
                                                                   num_entity_tokens,
                                                                   num_question_tokens) / self._embedding_dim
        # (batch_size, num_entities, num_question_tokens)
        question_table_similarity_max_score, _ = torch.max(question_table_similarity, 2)

        # (batch_size, num_entities, num_question_tokens, num_features)
        linking_scores = question_table_similarity_max_score
        if self._linking_params is not None:
            feature_scores = self._linking_params(linking_features).squeeze(3)
            linking_scores += feature_scores  # <-- IPL002

        # (batch_size, num_question_tokens, num_entities)
        linking_probabilities = self._get_linking_probabilities(linking_scores.transpose(1, 2),
                                                                question_mask, entity_mask)

        # (batch_size, num_question_tokens, embedding_dim)
        link_embedding = weighted_sum(entity_embeddings, linking_probabilities)
        encoder_input = torch.cat([link_embedding, embedded_question], 2)
        encoder_outputs, _ = self._encoder(encoder_input)
        final_encoder_output = encoder_outputs[:, -1]

        predicted_action_embedding = self._output_projection(final_encoder_output)
        action_logits = predicted_action_embedding.matmul(self._action_embedder.weight.t())

        outputs: Dict[str, torch.Tensor] = {}
        if target_action is not None:
            outputs['loss'] = F.cross_entropy(action_logits, target_action)
        else:
            outputs['best_action_sequence'] = action_logits.argmax(-1)
            outputs['linking_scores'] = linking_scores
            if self._linking_params is not None:
                outputs['feature_scores'] = feature_scores
            outputs['similarity_scores'] = question_table_similarity_max_score
        return outputs


parser = WikiTablesSemanticParser(vocab_size=40, embedding_dim=8, num_entity_types=3, num_linking_features=4,
                                  num_actions=6, action_embedding_dim=5)
optimizer = torch.optim.Adam(parser.parameters(), lr=1e-2)
question = torch.randint(1, 40, (2, 7))
table_tokens = torch.randint(1, 40, (2, 5, 3))
entity_types = torch.randint(0, 3, (2, 5))
linking_features = torch.randn(2, 5, 7, 4)
target_action = torch.tensor([1, 4])

parser.train()
train_output = parser(question, table_tokens, entity_types, linking_features, target_action)
optimizer.zero_grad()
train_output['loss'].backward()
optimizer.step()

parser.eval()
with torch.no_grad():
    outputs = parser(question, table_tokens, entity_types, linking_features)
similarity_scores = outputs['similarity_scores']
linking_scores = outputs['linking_scores']
