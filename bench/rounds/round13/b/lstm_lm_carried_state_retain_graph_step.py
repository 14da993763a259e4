# label: hazard raises no-twin
# why: the LSTM state is carried across batches without detach and each backward keeps the graph (retain_graph=True), so the next batch backpropagates into the previous batch's graph whose LSTM weights optimizer.step() already updated in place
# source: https://blog.youkuaiyun.com/windhawk_fly/article/details/143405685
import torch
import torch.nn as nn

torch.manual_seed(0)

EPOCH, batch_size, seq_len = 1, 4, 5
vocab_size, embedding_dim, hidden_dim, num_layers = 12, 6, 8, 1


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers, batch_first=True)
        self.proj = nn.Linear(hidden_dim, embedding_dim)

    def forward(self, x, h0, c0):
        out, (h, c) = self.lstm(self.embedding(x), (h0, c0))
        return self.proj(out), (h, c)


class NextEmbeddingLoss(nn.Module):
    def __init__(self, embedding):
        super().__init__()
        self.embedding = embedding

    def forward(self, pred, target_ids):
        return ((pred - self.embedding(target_ids).reshape(-1, embedding_dim).detach()) ** 2).mean()


lstm = LSTMModel()
loss_fn = NextEmbeddingLoss(lstm.embedding)
optimizer = torch.optim.Adam(lstm.parameters(), lr=1e-2)
tokens = torch.randint(0, vocab_size, (3, batch_size, seq_len + 1))
data_loader = [(t[:, :-1], t[:, 1:]) for t in tokens]
batch_count = len(data_loader)

losses = []
for epoch in range(EPOCH):
    batch_num = 0
    h0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    c0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    for batch in data_loader:
        optimizer.zero_grad()
        output, (h0, c0) = lstm(batch[0], h0, c0)
        loss = loss_fn(output.reshape(-1, embedding_dim), batch[1])
        loss.backward(retain_graph=True)
        optimizer.step()  # <-- IPL001: updates the LSTM weights that the retained graph of this batch (reached again through h0/c0) saved
        batch_num += 1
        losses.append(loss.detach())
