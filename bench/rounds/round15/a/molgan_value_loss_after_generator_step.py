# label: hazard raises no-twin
# why: train_step_G.backward(retain_graph=True) is followed by g_optimizer.step(), which updates the generator weights in place; train_step_V then backpropagates through the same generator graph whose saved weights are now at a newer version.
# source: https://github.com/kfzyqin/Implementation-MolGAN-PyTorch/issues/3
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=4, vertexes=3, edges=2, nodes=3):
        super().__init__()
        self.vertexes, self.edges, self.nodes = vertexes, edges, nodes
        self.layers = nn.Sequential(nn.Linear(z_dim, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        self.edges_layer = nn.Linear(16, edges * vertexes * vertexes)
        self.nodes_layer = nn.Linear(16, vertexes * nodes)
        self.dropoout = nn.Dropout(p=0.0)

    def forward(self, x):
        output = self.layers(x)
        edges_logits = self.edges_layer(output).view(-1, self.edges, self.vertexes, self.vertexes)
        edges_logits = (edges_logits + edges_logits.permute(0, 1, 3, 2)) / 2
        edges_logits = self.dropoout(edges_logits.permute(0, 2, 3, 1))
        nodes_logits = self.nodes_layer(output)
        nodes_logits = self.dropoout(nodes_logits.view(-1, self.vertexes, self.nodes))
        return edges_logits, nodes_logits


class Discriminator(nn.Module):
    def __init__(self, vertexes=3, edges=2, nodes=3):
        super().__init__()
        self.gcn = nn.Linear(nodes, 8)
        self.agg = nn.Linear(8, 8)
        self.output_layer = nn.Linear(8, 1)

    def forward(self, adj, hidden, node, activation=None):
        adj = adj[:, :, :, 1:].sum(-1)
        h = torch.tanh(self.gcn(torch.bmm(adj, node)))
        h = torch.tanh(self.agg(h)).sum(1)
        output = self.output_layer(h)
        output = activation(output) if activation is not None else output
        return output, h


class Solver(object):
    def __init__(self):
        self.z_dim = 4
        self.n_critic = 1
        self.post_method = 'soft_gumbel'
        self.G = Generator(self.z_dim)
        self.D = Discriminator()
        self.V = Discriminator()
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), 1e-3)
        self.d_optimizer = torch.optim.Adam(self.D.parameters(), 1e-3)
        self.v_optimizer = torch.optim.Adam(self.V.parameters(), 1e-3)

    def reset_grad(self):
        self.g_optimizer.zero_grad()
        self.d_optimizer.zero_grad()
        self.v_optimizer.zero_grad()

    @staticmethod
    def postprocess(inputs, method, temperature=1.):
        def listify(x):
            return x if type(x) == list or type(x) == tuple else [x]

        def delistify(x):
            return x if len(x) > 1 else x[0]

        if method == 'soft_gumbel':
            softmax = [F.gumbel_softmax(e_logits.contiguous().view(-1, e_logits.size(-1))
                                        / temperature, hard=False).view(e_logits.size())
                       for e_logits in listify(inputs)]
        else:
            softmax = [F.softmax(e_logits / temperature, -1) for e_logits in listify(inputs)]
        return [delistify(e) for e in (softmax)]

    def get_reward(self, n_hat, e_hat, method):
        return (n_hat.detach().argmax(-1).float().mean(-1, keepdim=True) / 3.0)

    def train_or_valid(self, a_tensor, x_tensor, reward_r, cur_la=0.5, cur_step=0, train_val_test='train'):
        z = torch.randn(a_tensor.size(0), self.z_dim)

        edges_logits, nodes_logits = self.G(z)
        (edges_hat, nodes_hat) = self.postprocess((edges_logits, nodes_logits), self.post_method)
        logits_fake, features_fake = self.D(edges_hat, None, nodes_hat)

        value_logit_real, _ = self.V(a_tensor, None, x_tensor, torch.sigmoid)
        value_logit_fake, _ = self.V(edges_hat, None, nodes_hat, torch.sigmoid)

        reward_f = self.get_reward(nodes_hat, edges_hat, self.post_method)

        loss_G = -logits_fake
        loss_V = torch.abs(value_logit_real - reward_r) + torch.abs(value_logit_fake - reward_f)
        loss_RL = -value_logit_fake

        loss_G = torch.mean(loss_G)
        loss_V = torch.mean(loss_V)
        loss_RL = torch.mean(loss_RL)

        alpha = torch.abs(loss_G.detach() / loss_RL.detach()).detach()
        train_step_G = cur_la * loss_G + (1 - cur_la) * alpha * loss_RL
        train_step_V = loss_V

        if train_val_test == 'train':
            self.reset_grad()

            if cur_step % self.n_critic == 0:
                train_step_G.backward(retain_graph=True)
                self.g_optimizer.step()  # <-- IPL001: updates G weights saved by the graph train_step_V still needs

            if cur_step % self.n_critic == 0:
                train_step_V.backward()
                self.v_optimizer.step()
        return train_step_G, train_step_V


solver = Solver()
a_tensor = F.one_hot(torch.randint(0, 2, (4, 3, 3)), 2).float()
x_tensor = F.one_hot(torch.randint(0, 3, (4, 3)), 3).float()
reward_r = torch.rand(4, 1)
loss_g, loss_v = solver.train_or_valid(a_tensor, x_tensor, reward_r)
