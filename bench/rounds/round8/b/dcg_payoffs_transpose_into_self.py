# label: hazard raises no-twin
# why: output[1] is assigned its own transpose in place; source and destination overlap in memory, which torch refuses (newer API) instead of silently mixing values
# source: https://github.com/wendelinboehmer/dcg/pull/19
import torch as th
import torch.nn as nn

th.manual_seed(0)


class DeepCoordinationGraphMAC:
    def __init__(self, n_agents=3, n_actions=2, rnn_hidden_dim=4):
        self.n_agents = n_agents
        self.n_actions = n_actions
        self.edges_from = th.tensor([0, 1])
        self.edges_to = th.tensor([1, 2])
        self.utility_fun = nn.Linear(rnn_hidden_dim, n_actions)
        self.payoff_fun = nn.Linear(2 * rnn_hidden_dim, n_actions * n_actions)

    def utilities(self, hidden_states):
        return self.utility_fun(hidden_states)

    def payoffs(self, hidden_states):
        n = self.n_actions
        inputs = th.stack([th.cat([hidden_states[:, self.edges_from], hidden_states[:, self.edges_to]], dim=-1),
                           th.cat([hidden_states[:, self.edges_to], hidden_states[:, self.edges_from]], dim=-1)], dim=0)
        output = self.payoff_fun(inputs)
        output = output.view(*(list(output.shape[:-1]) + [n, n]))
        # The output of the backward messages must be transposed
        output[1] = output[1].transpose(dim0=-2, dim1=-1)  # <-- IPL002: writes into output[1] while reading it through its transpose
        return output.mean(dim=0)

    def q_values(self, f_i, f_ij, actions):
        n_batches = actions.shape[0]
        q_i = f_i.gather(dim=-1, index=actions).squeeze(dim=-1)
        f_ij = f_ij.view(n_batches, len(self.edges_from), self.n_actions * self.n_actions)
        edge_actions = actions.gather(dim=-2, index=self.edges_from.view(1, -1, 1).expand(n_batches, -1, 1)) \
            * self.n_actions + actions.gather(dim=-2, index=self.edges_to.view(1, -1, 1).expand(n_batches, -1, 1))
        q_ij = f_ij.gather(dim=-1, index=edge_actions).squeeze(dim=-1)
        return q_i.sum(dim=-1) + q_ij.sum(dim=-1)


mac = DeepCoordinationGraphMAC()
hidden_states = th.randn(5, 3, 4)
actions = th.randint(0, 2, (5, 3, 1))
f_i = mac.utilities(hidden_states)
f_ij = mac.payoffs(hidden_states)
q = mac.q_values(f_i, f_ij, actions)
td_target = th.randn(5)
loss = (q - td_target).pow(2).mean()
loss.backward()
