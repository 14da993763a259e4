# label: hazard raises
# why: the predicted level-1 label tokens are written into context in place after the first BERT pass, but that pass's embedding backward saved those token ids, so backward finds them modified.
# source: http://rhkb.cn/news/180975.html
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyBert(nn.Module):
    """Stand-in for BertModel: returns (sequence_output, pooled_output)."""

    def __init__(self, vocab=30, hidden=16):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(32, hidden)
        self.attn = nn.MultiheadAttention(hidden, 2, batch_first=True)
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask=None):
        pos = torch.arange(input_ids.size(1)).unsqueeze(0)
        h = self.word_embeddings(input_ids) + self.position_embeddings(pos)
        key_padding_mask = None if attention_mask is None else attention_mask == 0
        h, _ = self.attn(h, h, h, key_padding_mask=key_padding_mask)
        pooled = torch.tanh(self.pooler(h[:, 0]))
        return h, pooled


class Model(nn.Module):
    def __init__(self, hidden=16, num_a=4, num_b=6):
        super(Model, self).__init__()
        self.bert = TinyBert(hidden=hidden)
        self.fc1 = nn.Linear(hidden, num_a)
        self.fc2 = nn.Linear(hidden, num_b)

    def forward(self, x, label_A_emb):
        context = x[0]  # 输入的句子
        mask = x[2]
        d1 = self.bert(context, attention_mask=mask)
        logit1 = self.fc1(d1[1])  # [batch_size, label_A_num]
        idx = torch.max(logit1.data, 1)[1]  # [batch_size]
        extra = label_A_emb[idx]
        context[:, -3:] = extra  # <-- IPL001: overwrites token ids the first pass's embedding backward saved
        mask[:, -3:] = 1
        d2 = self.bert(context, attention_mask=mask)
        logit2 = self.fc2(d2[1])  # [batch_size, label_B_num]
        return logit1, logit2


model = Model()
token_ids = torch.randint(1, 30, (4, 10))
token_ids[:, -3:] = 0
seq_len = torch.full((4,), 7)
attn_mask = torch.ones(4, 10, dtype=torch.long)
attn_mask[:, -3:] = 0
label_A_emb = torch.randint(1, 30, (4, 3))  # token ids spelling each level-1 label
labels_a = torch.tensor([0, 1, 2, 3])
labels_b = torch.tensor([5, 4, 3, 2])

logit1, logit2 = model((token_ids, seq_len, attn_mask), label_A_emb)
loss = nn.functional.cross_entropy(logit1, labels_a) + nn.functional.cross_entropy(logit2, labels_b)
loss.backward()
