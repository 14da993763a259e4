# label: safe
# why: masked_index_replace clones `target` before the indexed assignment into its flattened view, so the caller's embeddings are untouched and gradients flow both to the original embeddings and to the replacement vectors.
# source: https://github.com/allenai/allennlp/blob/250c37a639e6156a8e308ed2b43a369b43f06306/allennlp/nn/util.py
import torch
import torch.nn as nn

torch.manual_seed(0)


def flatten_and_batch_shift_indices(indices, sequence_length):
    offsets = torch.arange(0, indices.size(0), dtype=torch.long) * sequence_length
    for _ in range(len(indices.size()) - 1):
        offsets = offsets.unsqueeze(1)
    offset_indices = indices + offsets
    return offset_indices.view(-1)


def masked_index_replace(target, indices, mask, replace):
    target = target.clone()
    mask = mask.bool()
    prev_shape = target.size()
    # Shape: (batch_size * num_indices)
    flattened_indices = flatten_and_batch_shift_indices(indices * mask, target.size(1))
    # Shape: (batch_size * sequence_length, embedding_size)
    flattened_target = target.view(-1, target.size(-1))
    # Shape: (nonzero_indices, 1)
    mask = mask.view(-1)
    flattened_target[flattened_indices[mask]] = replace.view(-1, replace.size(-1))[mask]
    # Shape: (batch_size, sequence_length, embedding_dim)
    replaced_target = flattened_target.reshape(prev_shape)
    return replaced_target


class EntityAwareEncoder(nn.Module):
    def __init__(self, vocab_size=20, num_entities=6, dim=4):
        super().__init__()
        self.token_embedder = nn.Embedding(vocab_size, dim)
        self.entity_embedder = nn.Embedding(num_entities, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)

    def forward(self, tokens, entity_positions, entity_ids, entity_mask):
        embedded_text = self.token_embedder(tokens)
        entity_vectors = self.entity_embedder(entity_ids)
        replaced = masked_index_replace(embedded_text, entity_positions, entity_mask, entity_vectors)
        encoded, _ = self.encoder(replaced)
        return encoded, embedded_text


def main():
    model = EntityAwareEncoder()
    tokens = torch.randint(0, 20, (2, 5))
    entity_positions = torch.tensor([[1, 3], [0, 0]])
    entity_ids = torch.tensor([[2, 4], [1, 0]])
    entity_mask = torch.tensor([[True, True], [True, False]])
    encoded, embedded_text = model(tokens, entity_positions, entity_ids, entity_mask)
    (encoded.sum() + embedded_text.sum()).backward()
    return encoded.detach(), model.token_embedder.weight.grad, model.entity_embedder.weight.grad


encoded_value, token_grad, entity_grad = main()
