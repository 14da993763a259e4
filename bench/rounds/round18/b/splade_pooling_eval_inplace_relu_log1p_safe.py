# label: safe
# why: SpladePooling only uses relu_()/log1p_() on the freshly masked chunk logits when not self.training (encoding under torch.no_grad()); the training path uses out-of-place relu()/log1p()
# source: https://github.com/UKPLab/sentence-transformers/commit/2f02b798b7e6bab049cfb8927d596eb9af0b444a
import torch
import torch.nn as nn

torch.manual_seed(0)


class MLMTransformer(nn.Module):
    def __init__(self, vocab_size=30, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim)
        self.enc = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.0)
        self.mlm_head = nn.Linear(dim, vocab_size)

    def forward(self, features):
        h = self.enc(self.emb(features["input_ids"]))
        features["token_embeddings"] = self.mlm_head(h)
        return features


class SpladePooling(nn.Module):
    def __init__(self, pooling_strategy="max", activation_function="relu", chunk_size=None):
        super().__init__()
        self.pooling_strategy = pooling_strategy
        self.activation_function = activation_function
        self.chunk_size = chunk_size

    def forward(self, features):
        mlm_logits = features["token_embeddings"]
        attention_mask = features["attention_mask"]
        attention_mask_expanded = attention_mask.unsqueeze(-1).to(mlm_logits.dtype)
        batch_size, seq_len, vocab_s = mlm_logits.shape
        if self.pooling_strategy == "max":
            pooled_scores = torch.full((batch_size, vocab_s), float("-inf"), dtype=mlm_logits.dtype)
        else:
            pooled_scores = torch.zeros((batch_size, vocab_s), dtype=mlm_logits.dtype)
        chunk_size = seq_len if (self.chunk_size is None or self.chunk_size <= 0) else self.chunk_size
        for i in range(0, seq_len, chunk_size):
            current_chunk_logits = mlm_logits[:, i : i + chunk_size, :]
            current_chunk_mask = attention_mask_expanded[:, i : i + chunk_size, :]
            masked_current_chunk_logits = current_chunk_logits * current_chunk_mask
            if not self.training:
                current_chunk_transformed = masked_current_chunk_logits.relu_().log1p_()
            else:
                current_chunk_transformed = masked_current_chunk_logits.relu().log1p()
            if self.activation_function == "log1p_relu":
                if not self.training:
                    current_chunk_transformed = current_chunk_transformed.log1p_()
                else:
                    current_chunk_transformed = current_chunk_transformed.log1p()
            if self.pooling_strategy == "max":
                chunk_pooled = torch.max(current_chunk_transformed, dim=1)[0]
                pooled_scores = torch.maximum(pooled_scores, chunk_pooled)
            else:
                chunk_pooled = torch.sum(current_chunk_transformed, dim=1)
                pooled_scores = pooled_scores + chunk_pooled
        features["sentence_embedding"] = pooled_scores
        return features


class SparseEncoder(nn.Sequential):
    def encode(self, features):
        self.eval()
        with torch.no_grad():
            out = self(features)["sentence_embedding"]
        self.train()
        return out


model = SparseEncoder(MLMTransformer(), SpladePooling(activation_function="log1p_relu", chunk_size=3))
queries = {"input_ids": torch.randint(0, 30, (2, 5)), "attention_mask": torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])}
docs = {"input_ids": torch.randint(0, 30, (2, 7)), "attention_mask": torch.ones(2, 7, dtype=torch.long)}

# training step (SpladeLoss-style: ranking loss + FLOPS regulariser)
model.train()
q_emb = model(dict(queries))["sentence_embedding"]
d_emb = model(dict(docs))["sentence_embedding"]
scores = q_emb @ d_emb.t()
loss = nn.functional.cross_entropy(scores, torch.arange(2)) + 1e-3 * (d_emb.mean(0) ** 2).sum()
loss.backward()

# inference with the in-place eval path
doc_index = model.encode(dict(docs))
