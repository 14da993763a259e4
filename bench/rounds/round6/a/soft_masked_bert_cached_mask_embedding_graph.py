# label: hazard raises no-twin
# why: mask_e is computed once in __init__ through the BERT embedding LayerNorm and reused every step with retain_graph=True; optimizer.step() updates the embedding weights in place, so the second step's backward through mask_e's old graph finds them modified
# source: https://github.com/hiyoung123/SoftMaskedBert/issues/16 (model/soft_masked_bert.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_position=16):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(max_position, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long).unsqueeze(0)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class BiGRU(nn.Module):
    def __init__(self, embedding_size, hidden, n_layers):
        super(BiGRU, self).__init__()
        self.rnn = nn.GRU(embedding_size, hidden, num_layers=n_layers, bidirectional=True, batch_first=True)
        self.linear = nn.Linear(hidden * 2, 1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.sigmoid(self.linear(out))


class SoftMaskedBert(nn.Module):
    def __init__(self, embeddings, corrector, mask_token_id, hidden, layer_n, vocab_size, embedding_size):
        super(SoftMaskedBert, self).__init__()
        self.embedding = embeddings
        self.embedding_size = embedding_size
        self.detector = BiGRU(self.embedding_size, hidden, layer_n)
        self.corrector = corrector
        mask_token_id = torch.tensor([[mask_token_id]])
        self.mask_e = self.embedding(mask_token_id)
        self.linear = nn.Linear(self.embedding_size, vocab_size)
        self.softmax = nn.LogSoftmax(dim=-1)

    def forward(self, input_ids):
        e = self.embedding(input_ids)
        p = self.detector(e)
        e_ = p * self.mask_e + (1 - p) * e
        h = self.corrector(e_)
        h = h + e
        out = self.softmax(self.linear(h))
        return out, p


vocab_size, embedding_size = 20, 8
embeddings = BertEmbeddings(vocab_size, embedding_size)
corrector = nn.Sequential(nn.Linear(embedding_size, embedding_size), nn.Tanh())
model = SoftMaskedBert(embeddings, corrector, mask_token_id=3, hidden=4, layer_n=1,
                       vocab_size=vocab_size, embedding_size=embedding_size)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion_c = nn.NLLLoss()
criterion_d = nn.BCELoss()
gama = 0.8

input_ids = torch.randint(0, vocab_size, (2, 6))
output_ids = torch.randint(0, vocab_size, (2, 6))
label = torch.randint(0, 2, (2, 6)).float()

losses = []
for step in range(2):
    out, prob = model(input_ids)
    loss_d = criterion_d(prob.squeeze(-1), label)
    loss_c = criterion_c(out.transpose(1, 2), output_ids)
    loss = gama * loss_c + (1 - gama) * loss_d
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()  # <-- IPL001: updates the embedding weights that mask_e's cached graph saved for backward
    losses.append(loss.item())
