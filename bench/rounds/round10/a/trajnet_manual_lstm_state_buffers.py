# label: hazard raises
# why: the hand-unrolled social LSTM stores each timestep's pooled grid, input embedding and hidden state into preallocated buffers (self.pre_pool[t] = ..., self.x[t] = ..., self.h[t] = ...); every write bumps the version of a buffer whose earlier slices the matmuls already saved for backward
# source: https://github.com/vita-epfl/trajnetplusplusbaselines/issues/7
import torch
import torch.nn as nn

torch.manual_seed(0)


class OccupancyPool:
    def __init__(self, n=4, cell_side=1.0):
        self.n = n
        self.cell_side = cell_side
        self.type_ = 'occupancy'

    def occupancies(self, prev_position, curr_position):
        rel = curr_position.unsqueeze(0) - curr_position.unsqueeze(1)      # num_tracks x num_tracks x 2
        idx = ((rel / self.cell_side) + self.n / 2).long().clamp(0, self.n - 1)
        grid = torch.zeros(len(curr_position), self.n * self.n)
        flat = idx[..., 0] * self.n + idx[..., 1]
        grid.scatter_add_(1, flat, torch.ones_like(flat, dtype=torch.float))
        return grid


class ManualSocialLSTM(nn.Module):
    """LSTM unrolled by hand (for inspecting gates) with occupancy pooling of neighbours"""

    def __init__(self, embedding_dim=4, hidden_dim=6, pool_dim=16):
        super().__init__()
        self.pool = OccupancyPool()
        self.hidden_dim = hidden_dim
        self.W_emb = nn.Parameter(torch.randn(embedding_dim, 2) * 0.3)
        self.W_pool = nn.Parameter(torch.randn(embedding_dim, pool_dim) * 0.3)
        self.b_pool = nn.Parameter(torch.zeros(embedding_dim))
        self.Wxh = nn.Parameter(torch.randn(4 * hidden_dim, 2 * embedding_dim) * 0.3)
        self.Whh = nn.Parameter(torch.randn(4 * hidden_dim, hidden_dim) * 0.3)
        self.b = nn.Parameter(torch.zeros(4 * hidden_dim))
        self.W_out = nn.Parameter(torch.randn(2, hidden_dim) * 0.3)
        self.relu = nn.ReLU()

    def forward(self, observed):
        T = observed.shape[0]
        H = self.hidden_dim
        self.pre_pool = torch.zeros(T, self.W_pool.shape[1])
        self.post_pool = torch.zeros(T, self.W_pool.shape[0])
        self.x = torch.zeros(T, self.W_emb.shape[0])
        self.h = torch.zeros(T + 1, H)
        self.c = torch.zeros(T + 1, H)
        predictions = []
        for t in range(1, T):
            prev_position, curr_position = observed[t - 1], observed[t]
            velocity = curr_position[0] - prev_position[0]
            input_emb = torch.matmul(self.W_emb, velocity)

            ## Pooling
            grid = self.pool.occupancies(prev_position, curr_position)
            grid = grid.view(len(curr_position), -1)
            self.pre_pool[t] = grid[0]  # <-- IPL001: writes into the pre_pool buffer whose earlier rows the previous matmul saved
            self.post_pool[t] = torch.matmul(self.W_pool, self.pre_pool[t]) + self.b_pool  # <-- IPL001: post_pool rows feed the relu/cat of earlier steps
            self.x[t] = input_emb  # <-- IPL001: x buffer rows are saved by earlier gate matmuls

            xh = torch.cat([self.x[t], self.relu(self.post_pool[t])])
            gates = torch.matmul(self.Wxh, xh) + torch.matmul(self.Whh, self.h[t]) + self.b
            i, f, g, o = gates.split(H)
            c_next = torch.sigmoid(f) * self.c[t] + torch.sigmoid(i) * torch.tanh(g)
            self.c[t + 1] = c_next  # <-- IPL001: c buffer rows are saved by this and the previous step's mul
            self.h[t + 1] = torch.sigmoid(o) * torch.tanh(self.c[t + 1])  # <-- IPL001: h buffer rows are saved by the previous step's Whh matmul
            predictions.append(curr_position[0] + torch.matmul(self.W_out, self.h[t + 1]))
        return torch.stack(predictions)


model = ManualSocialLSTM()
observed = torch.cumsum(torch.randn(5, 3, 2) * 0.3, dim=0)   # 5 timesteps, primary + 2 neighbours
target = observed[2:, 0] + 0.1
pred = model(observed)
loss = ((pred[:-1] - target) ** 2).mean()
loss.backward()
