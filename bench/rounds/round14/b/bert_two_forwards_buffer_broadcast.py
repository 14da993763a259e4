# label: hazard raises
# why: a DDP-style wrapper re-broadcasts module buffers in place at the start of every forward; the second forward bumps the position_ids buffer that the first forward's embedding lookup saved for backward
# source: https://github.com/huggingface/transformers/issues/14179
import torch
import torch.nn as nn

torch.manual_seed(0)


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size=30, hidden=8, max_pos=16):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.LayerNorm = nn.LayerNorm(hidden)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)).clone())

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class TextRelevanceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = BertEmbeddings()
        self.pooler = nn.Linear(8, 8)
        self.classifier = nn.Linear(8, 2)

    def forward(self, input_ids):
        h = self.embeddings(input_ids)
        pooled = torch.tanh(self.pooler(h[:, 0]))
        return self.classifier(pooled)


class DistributedDataParallelLike(nn.Module):
    """Mimics DDP(broadcast_buffers=True): rank-0 buffers are copied into the module before each forward."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self._rank0_buffers = [b.detach().clone() for b in module.buffers()]

    def _sync_buffers(self):
        with torch.no_grad():
            for buf, src in zip(self.module.buffers(), self._rank0_buffers):
                buf.copy_(src)  # <-- IPL001: in-place broadcast bumps the buffer saved by the previous forward

    def forward(self, *inputs):
        self._sync_buffers()
        return self.module(*inputs)


model = DistributedDataParallelLike(TextRelevanceModel())
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

query_ids = torch.randint(30, (4, 10))
doc_ids = torch.randint(30, (4, 10))
labels = torch.randint(2, (4,))

query_logits = model(query_ids)
doc_logits = model(doc_ids)
loss = criterion(query_logits, labels) + criterion(doc_logits, labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
