# label: hazard silent
# why: linking_scores is just another name for question_table_similarity_max_score, so linking_scores += feature_scores also adds the linking-feature scores into the tensor the parser later reports as outputs['similarity_scores'], which silently carries similarity + features instead of the raw question/table similarity.
# source: https://github.com/allenai/allennlp/commit/71d564be90fe7082221ec7696b904129581d8b6f ("fixed bug where linking scores werent properly updated with features", #948; allennlp/models/encoder_decoders/wikitables_semantic_parser.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class WikiTablesSemanticParser(nn.Module):
    def __init__(self, vocab_size=30, embedding_dim=8, num_linking_features=5, num_types=4):
        super().__init__()
        self._embedding_dim = embedding_dim
        self._question_embedder = nn.Embedding(vocab_size, embedding_dim)
        self._type_params = nn.Linear(num_types, embedding_dim)
        self._neighbor_params = nn.Linear(embedding_dim, embedding_dim)
        self._linking_params = nn.Linear(num_linking_features, 1)

    def _get_linking_probabilities(self, linking_scores, question_mask):
        # (batch_size, num_question_tokens, num_entities)
        probabilities = torch.softmax(linking_scores, dim=-1)
        return probabilities * question_mask.unsqueeze(-1).float()

    def forward(self, question, table, entity_types, target_entities):
        embedded_question = self._question_embedder(question["tokens"])
        question_mask = question["tokens"] != 0
        embedded_table = self._question_embedder(table["text"])
        batch_size, num_entities, num_entity_tokens, _ = embedded_table.size()
        num_question_tokens = embedded_question.size(1)

        entity_type_embeddings = self._type_params(entity_types.float())
        projected_neighbor_embeddings = self._neighbor_params(embedded_table.mean(2))
        entity_embeddings = torch.tanh(entity_type_embeddings + projected_neighbor_embeddings)

        question_table_similarity = torch.bmm(embedded_table.view(batch_size, num_entities * num_entity_tokens, self._embedding_dim),
                                              torch.transpose(embedded_question, 1, 2))
        question_table_similarity = question_table_similarity.view(batch_size, num_entities, num_entity_tokens,
                                                                   num_question_tokens) / self._embedding_dim
        # (batch_size, num_entities, num_question_tokens)
        question_table_similarity_max_score, _ = torch.max(question_table_similarity, 2)
        # (batch_size, num_entities, num_question_tokens, num_features)
        linking_features = table["linking"]
        linking_scores = question_table_similarity_max_score
        if self._linking_params is not None:
            feature_scores = self._linking_params(linking_features).squeeze(3)
            linking_scores += feature_scores  # <-- IPL002

        # (batch_size, num_question_tokens, num_entities)
        linking_probabilities = self._get_linking_probabilities(linking_scores.transpose(1, 2), question_mask)
        entity_logits = (linking_probabilities.unsqueeze(-1) * entity_embeddings.unsqueeze(1)).sum(2) @ entity_embeddings.transpose(1, 2)
        loss = nn.functional.cross_entropy(entity_logits.view(-1, num_entities), target_entities.view(-1))

        outputs = {"loss": loss}
        outputs["linking_scores"] = linking_scores
        if self._linking_params is not None:
            outputs["feature_scores"] = feature_scores
        outputs["similarity_scores"] = question_table_similarity_max_score
        return outputs


def main():
    model = WikiTablesSemanticParser()
    question = {"tokens": torch.tensor([[3, 7, 9, 0], [5, 2, 8, 11]])}
    table = {"text": torch.randint(1, 30, (2, 3, 2)), "linking": torch.rand(2, 3, 4, 5)}
    entity_types = nn.functional.one_hot(torch.tensor([[0, 1, 2], [3, 1, 0]]), 4)
    target_entities = torch.tensor([[0, 1, 2, 0], [2, 2, 1, 0]])
    outputs = model(question, table, entity_types, target_entities)
    outputs["loss"].backward()
    return outputs["similarity_scores"].detach(), outputs["linking_scores"].detach(), outputs["loss"].detach()


similarity_scores, linking_scores, loss = main()
