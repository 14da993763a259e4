# label: safe
# why: the fixed training loop detaches the carried hidden state before each batch, so backward never reaches a graph whose weights optimizer.step() already changed; the in-place reset and accumulation writes hit fresh buffers
# source: https://github.com/eXascaleInfolab/Flashback_code/issues/2
import torch
import torch.nn as nn

torch.manual_seed(0)


class FixNoiseStrategy:
    def __init__(self, hidden_size):
        mu, sd = 0, 1 / hidden_size
        self.h0 = torch.randn(hidden_size, requires_grad=False) * sd + mu

    def on_init(self, user_len, device):
        hs = []
        for i in range(user_len):
            hs.append(self.h0)
        return torch.stack(hs, dim=0).view(1, user_len, -1).to(device)

    def on_reset(self, user):
        return self.h0


class Flashback(nn.Module):
    def __init__(self, input_size, user_count, hidden_size, f_t, f_s):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.f_t = f_t
        self.f_s = f_s
        self.encoder = nn.Embedding(input_size, hidden_size)
        self.user_encoder = nn.Embedding(user_count, hidden_size)
        self.rnn = nn.RNN(hidden_size, hidden_size)
        self.fc = nn.Linear(2 * hidden_size, input_size)

    def forward(self, x, t, s, h, active_user):
        seq_len, user_len = x.size()
        x_emb = self.encoder(x)
        out, h = self.rnn(x_emb, h)

        out_w = torch.zeros(seq_len, user_len, self.hidden_size)
        for i in range(seq_len):
            sum_w = torch.zeros(user_len, 1)
            for j in range(i + 1):
                dist_t = t[i] - t[j]
                dist_s = torch.norm(s[i] - s[j], dim=-1)
                a_j = self.f_t(dist_t, user_len).unsqueeze(1)
                b_j = self.f_s(dist_s, user_len).unsqueeze(1)
                w_j = a_j * b_j + 1e-10
                sum_w += w_j
                out_w[i] += w_j * out[j]
            out_w[i] /= sum_w

        p_u = self.user_encoder(active_user).view(user_len, self.hidden_size)
        out_pu = torch.zeros(seq_len, user_len, 2 * self.hidden_size)
        for i in range(seq_len):
            out_pu[i] = torch.cat([out_w[i], p_u], dim=1)
        return self.fc(out_pu), h


class FlashbackTrainer:
    def __init__(self, model, loc_count):
        self.model = model
        self.loc_count = loc_count
        self.cross_entropyloss = nn.CrossEntropyLoss()

    def loss(self, x, t, s, y, h, active_users):
        self.model.train()
        out, h = self.model(x, t, s, h, active_users)
        out = out.view(-1, self.loc_count)
        l = self.cross_entropyloss(out, y.view(-1))
        return l, h


loc_count, user_count, hidden_size, seq_len, user_len = 12, 3, 8, 4, 3
f_t = lambda delta_t, user_len: ((torch.cos(delta_t * 2 * 3.1415 / 86400) + 1) / 2) * torch.exp(-(delta_t / 86400 * 0.1))
f_s = lambda delta_s, user_len: torch.exp(-(delta_s * 100))
model = Flashback(loc_count, user_count, hidden_size, f_t, f_s)
trainer = FlashbackTrainer(model, loc_count)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
h0_strategy = FixNoiseStrategy(hidden_size)

batches = []
for b in range(2):
    x = torch.randint(0, loc_count, (seq_len, user_len))
    t = torch.cumsum(torch.rand(seq_len, user_len) * 3600, dim=0)
    s = torch.rand(seq_len, user_len, 2)
    y = torch.randint(0, loc_count, (seq_len, user_len))
    reset_h = [b == 0] * user_len
    batches.append((x, t, s, y, reset_h, torch.arange(user_len)))

h = h0_strategy.on_init(user_len, 'cpu')
losses = []
for i, (x, t, s, y, reset_h, active_users) in enumerate(batches):
    for j, reset in enumerate(reset_h):
        if reset:
            h[0, j] = h0_strategy.on_reset(active_users[j])
    optimizer.zero_grad()
    h = h.detach()
    loss, h = trainer.loss(x, t, s, y, h, active_users)
    loss.backward()
    losses.append(loss.item())
    optimizer.step()

final_h = h
