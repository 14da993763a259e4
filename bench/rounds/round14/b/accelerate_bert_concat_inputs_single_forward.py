# label: safe
# why: the fix from the thread: source and target batches are concatenated into one forward, so the in-place buffer broadcast happens before anything is saved for backward
# source: https://github.com/huggingface/accelerate/issues/97
import torch
import torch.nn as nn

torch.manual_seed(0)


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size=100, hidden=8, max_pos=16):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.token_type_embeddings = nn.Embedding(2, hidden)
        self.LayerNorm = nn.LayerNorm(hidden)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)).clone())
        self.register_buffer("token_type_ids", torch.zeros(1, max_pos, dtype=torch.long))

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        token_type_ids = self.token_type_ids[:, :seq_length].expand(input_ids.size(0), seq_length)
        embeddings = self.word_embeddings(input_ids)
        embeddings = embeddings + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class BertForSequenceClassification(nn.Module):
    def __init__(self, num_labels=2):
        super().__init__()
        self.embeddings = BertEmbeddings()
        self.classifier = nn.Linear(8, num_labels)

    def forward(self, input_ids):
        return self.classifier(self.embeddings(input_ids)[:, 0])


class PreparedModel(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module
        self._rank0_buffers = [b.detach().clone() for b in module.buffers()]

    def forward(self, input_ids):
        with torch.no_grad():
            for buf, src in zip(self.module.buffers(), self._rank0_buffers):
                buf.copy_(src)
        return self.module(input_ids)


net = PreparedModel(BertForSequenceClassification())
optim_net = torch.optim.AdamW(net.parameters(), lr=1e-4)
cls_crit = nn.CrossEntropyLoss()

batch_size, seq_len = 5, 10
src_inputs = torch.randint(100, size=(batch_size, seq_len))
src_label = torch.randint(2, size=(batch_size,))
tgt_inputs = torch.randint(100, size=(batch_size, seq_len))

total_inputs = torch.cat([src_inputs, tgt_inputs], 0)
total_logits = net(total_inputs)
src_logits, tgt_logits = total_logits[:batch_size], total_logits[batch_size:]
loss = cls_crit(src_logits, src_label) - 0.1 * tgt_logits.softmax(-1).max(-1)[0].mean()
optim_net.zero_grad()
loss.backward()
optim_net.step()
