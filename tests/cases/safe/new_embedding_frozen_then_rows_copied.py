# label: safe no-twin
# why: the new embedding is frozen with module.requires_grad_(False) before rows of a reference embedding are copied into its weight, so the in-place write touches a leaf that needs no grad.
# source: adapters 1.3.0, adapters/model_mixin.py (add_embeddings), untuned run 19
import torch
import torch.nn as nn

torch.manual_seed(0)


class EmbeddingAdaptersMixin:
    def __init__(self):
        self.loaded_embeddings = {"default": nn.Embedding(10, 4)}

    def add_embeddings(self, name, vocab, reference_vocab, reference_embedding="default"):
        embedding = nn.Embedding(len(vocab), 4)
        embedding.weight.data.normal_(mean=0.0, std=0.02)
        embedding.requires_grad_(False)
        for t in set(vocab) & set(reference_vocab):
            idx_reference = reference_vocab[t]
            idx = vocab[t]
            embedding.weight[idx] = (
                self.loaded_embeddings[reference_embedding].weight[idx_reference].detach().clone()
            )
        embedding.train(False)
        self.loaded_embeddings[name] = embedding
        return embedding


mixin = EmbeddingAdaptersMixin()
vocab = {"a": 0, "b": 1, "c": 2}
reference_vocab = {"a": 3, "c": 5}
emb = mixin.add_embeddings("new", vocab, reference_vocab)
emb.requires_grad_(True)
out = emb(torch.tensor([0, 1, 2])).sum()
out.backward()
print(emb.weight.grad.shape)
