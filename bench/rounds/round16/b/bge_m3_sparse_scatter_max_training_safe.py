# label: safe
# why: in training the sparse head scatters into a fresh zeros tensor and reduces with max(dim=1), whose backward keeps only indices, so zeroing the special-token columns in place is harmless
# source: https://github.com/FlagOpen/FlagEmbedding/issues/1364 (training branch of the BGE-M3 sparse embedding, kept after the fix)
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim)
        self.layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=2 * dim, dropout=0.0, batch_first=True)

    def forward(self, text_ids, attention_mask):
        return self.layer(self.emb(text_ids), src_key_padding_mask=attention_mask == 0)


class SparseHead(nn.Module):
    def __init__(self, in_features, vocab_size, cls_id=0, eos_id=2, pad_id=1, unk_id=3):
        super().__init__()
        self.sparse_linear = nn.Linear(in_features, 1)
        self.vocab_size = vocab_size
        self.cls_id, self.eos_id, self.pad_id, self.unk_tid = cls_id, eos_id, pad_id, unk_id

    def forward(self, hidden_state, input_ids, return_embedding: bool = True):
        token_weights = torch.relu(self.sparse_linear(hidden_state))
        if not return_embedding:
            return token_weights[:, :, 0]
        if self.training:
            embedding = torch.zeros(input_ids.size(0), input_ids.size(1), self.vocab_size).to(token_weights)
            embedding = torch.scatter(embedding, dim=-1, index=input_ids.unsqueeze(-1), src=token_weights)
            embedding = torch.max(embedding, dim=1).values
        else:
            # Optimize suggestion from issue #1364: only without gradients
            embedding = torch.zeros(input_ids.size(0), self.vocab_size).to(token_weights)
            embedding = embedding.scatter_reduce(dim=-1, index=input_ids, src=token_weights.squeeze(-1), reduce="amax")

        unused_tokens = [self.cls_id, self.eos_id, self.pad_id, self.unk_tid]
        embedding[:, unused_tokens] *= 0.
        return embedding


class BGEM3(nn.Module):
    def __init__(self, vocab_size=20, dim=8):
        super().__init__()
        self.backbone = Backbone(vocab_size, dim)
        self.sparse_head = SparseHead(dim, vocab_size)

    def forward(self, text_ids, attention_mask):
        h = self.backbone(text_ids, attention_mask)
        dense = F.normalize(h[:, 0], dim=-1)
        sparse = self.sparse_head(h, text_ids)
        return {"dense_vecs": dense, "sparse_vecs": sparse}


model = BGEM3()
q_ids = torch.tensor([[0, 5, 7, 9, 2], [0, 6, 6, 2, 1]])
p_ids = torch.tensor([[0, 5, 11, 2, 1], [0, 8, 6, 12, 2]])
q_mask = (q_ids != 1).long()
p_mask = (p_ids != 1).long()
q = model(q_ids, q_mask)
p = model(p_ids, p_mask)
sparse_scores = q["sparse_vecs"] @ p["sparse_vecs"].T
dense_scores = q["dense_vecs"] @ p["dense_vecs"].T
loss = F.cross_entropy(dense_scores + 0.3 * sparse_scores, torch.arange(2))
loss.backward()
sparse_out = sparse_scores.detach()
