# label: hazard raises no-twin
# why: the replay memory stores the state x = new_state(f, g) with its graph through the CNN encoders and the RGCN, replay() backpropagates with retain_graph=True and then optimizier.step() rewrites those encoder weights in place, so the next replay that samples an old transition backpropagates into weights modified since that graph was built.
# source: https://github.com/WOW5678/CompNet/issues/2
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
random.seed(1)

EMB_SIZE = 16
GAMMA = 0.9
BATCH_SIZE = 4
state_size = EMB_SIZE
memory = []


class CNN(nn.Module):
    def __init__(self, vocab_size, emb_size, num_channels, hidden_dim):
        super(CNN, self).__init__()
        self.embedding = nn.Embedding(embedding_dim=emb_size, num_embeddings=vocab_size)
        self.conv = nn.Sequential(nn.Conv1d(emb_size, num_channels, kernel_size=3, stride=2), nn.Tanh())
        self.out = nn.Linear(num_channels, hidden_dim, bias=True)

    def forward(self, x):
        x_emb = self.embedding(x).unsqueeze(0).permute(0, 2, 1)
        x = self.conv(x_emb)
        features = F.max_pool1d(x, x.size(dim=2)).squeeze(dim=2)
        return self.out(features)


class GCNLayer(nn.Module):
    def __init__(self, in_size, out_size, total_rel=2, n_basis=2):
        super(GCNLayer, self).__init__()
        self.basis_weights = nn.Parameter(torch.empty(n_basis, in_size, out_size))
        self.basis_coeff = nn.Parameter(torch.empty(total_rel, n_basis))
        nn.init.xavier_uniform_(self.basis_weights.data)
        nn.init.xavier_uniform_(self.basis_coeff.data)

    def forward(self, inp, adj_mat_list):
        rel_weights = torch.einsum('ij,jmn->imn', [self.basis_coeff, self.basis_weights])
        weights = rel_weights.view(rel_weights.shape[0] * rel_weights.shape[1], rel_weights.shape[2])
        if inp is not None:
            tmp = torch.cat([torch.mm(mat, inp) for mat in adj_mat_list], 1)
        else:
            tmp = torch.cat(adj_mat_list, 1)
        return torch.matmul(tmp, weights)


class RGCN(nn.Module):
    def __init__(self, layer_sizes, total_ent):
        super(RGCN, self).__init__()
        self.layers = nn.ModuleList()
        _l = total_ent
        for l in layer_sizes:
            self.layers.append(GCNLayer(_l, l))
            _l = l

    def forward(self, adj_mat_list):
        out = None
        final_rep = []
        for i, layer in enumerate(self.layers):
            if i != 0:
                out = F.relu(out)
            out = layer(out, adj_mat_list)
            final_rep.append(out)
        final_rep = torch.cat(final_rep, 1)
        return out, torch.sum(final_rep, 0).view(-1, final_rep.shape[1])


class DQN(nn.Module):
    def __init__(self, state_size, action_size):
        super(DQN, self).__init__()
        self.W = nn.Parameter(torch.empty(state_size, state_size))
        self.U = nn.Parameter(torch.empty(state_size, state_size))
        nn.init.xavier_uniform_(self.W.data)
        nn.init.xavier_uniform_(self.U.data)
        self.fc1 = nn.Linear(state_size, 32)
        self.fc2 = nn.Linear(32, action_size)

    def forward(self, x_):
        x_t, h_t_1 = x_[0], x_[1]
        state = torch.sigmoid(torch.mm(self.W, x_t.t()) + torch.mm(self.U, h_t_1.t()))
        fc1 = F.relu(self.fc1(state.t()))
        return state.t(), self.fc2(fc1)


class Agent(object):
    def __init__(self, state_size, action_size, drug_vocab_size):
        self.action_size = action_size
        self.cnn_diagnosis = CNN(30, EMB_SIZE, 8, EMB_SIZE)
        self.cnn_procedure = CNN(30, EMB_SIZE, 8, EMB_SIZE)
        self.rgcn = RGCN([8, 8], drug_vocab_size)
        self.model = DQN(state_size, action_size)
        self.target_model = DQN(state_size, action_size)
        self.target_model.load_state_dict(self.model.state_dict())
        self.model_params = list(self.cnn_diagnosis.parameters()) + list(self.cnn_procedure.parameters()) \
            + list(self.rgcn.parameters()) + list(self.model.parameters())
        self.optimizier = torch.optim.Adam(self.model_params, lr=1e-3)
        self.loss = nn.MSELoss()

    def reset(self, x):
        return torch.cat((self.cnn_diagnosis(x[0]), self.cnn_procedure(x[1])), 0)

    def new_state(self, f, g):
        a = F.softmax(torch.mm(f, g.t()), dim=0)
        f_ = torch.mm(a.t(), f)
        return f_ + g

    def replay(self, BATCH_SIZE):
        batch = random.sample(memory, BATCH_SIZE)
        b_x = torch.cat([m[0] for m in batch], 0)
        b_h = torch.cat([m[1] for m in batch], 0)
        b_action = torch.LongTensor([m[2] for m in batch]).unsqueeze(1)
        b_reward = torch.FloatTensor([m[3] for m in batch])
        b_next_x = torch.cat([m[4] for m in batch], 0)
        b_next_h = torch.cat([m[5] for m in batch], 0)

        _, q_eval = self.model((b_x, b_h))
        q_eval = q_eval.gather(1, b_action)
        _, q_next = self.target_model((b_next_x, b_next_h))
        q_next = q_next.detach()
        q_target = (b_reward + GAMMA * q_next.max(1)[0]).unsqueeze(1)
        loss = self.loss(q_eval, q_target)

        self.optimizier.zero_grad()
        loss.backward(retain_graph=True)
        self.optimizier.step()  # <-- IPL001
        return loss


def main():
    drug_vocab_size, action_size = 6, 6
    agent = Agent(state_size, action_size, drug_vocab_size)
    adjacencies = [torch.eye(drug_vocab_size), (torch.rand(drug_vocab_size, drug_vocab_size) > 0.6).float()]
    losses = []
    for episode in range(3):
        x_codes = (torch.randint(0, 30, (12,)), torch.randint(0, 30, (12,)))
        _, g = agent.rgcn(adjacencies)
        f = agent.reset(x_codes)
        h = torch.zeros(1, state_size)
        x = agent.new_state(f, g)
        for step in range(3):
            next_h, output = agent.model((x, h))
            action = random.randrange(action_size)
            reward = random.choice([1, -1])
            next_x = agent.new_state(f, g)
            memory.append((x, h, action, reward, next_x, next_h))
            x, h = next_x, next_h
            if len(memory) >= BATCH_SIZE:
                losses.append(agent.replay(BATCH_SIZE).detach())
    return torch.stack(losses)


losses = main()
