# label: safe
# why: fixed learner: the unavailable-action mask is written into mac_out.clone().detach(), a private copy, so the chosen-action Q-values gathered from mac_out keep their gradient
# source: https://github.com/oxwhirl/pymarl/commit/406a8cd4bd69715bec879108e67db8797169de94 (fixed src/learners/q_learner.py)
import torch as th
import torch.nn as nn
import torch.nn.functional as F
from types import SimpleNamespace

th.manual_seed(0)


class RNNAgent(nn.Module):
    def __init__(self, input_shape, args):
        super().__init__()
        self.args = args
        self.fc1 = nn.Linear(input_shape, args.rnn_hidden_dim)
        self.rnn = nn.GRUCell(args.rnn_hidden_dim, args.rnn_hidden_dim)
        self.fc2 = nn.Linear(args.rnn_hidden_dim, args.n_actions)

    def init_hidden(self):
        return self.fc1.weight.new(1, self.args.rnn_hidden_dim).zero_()

    def forward(self, inputs, hidden_state):
        x = F.relu(self.fc1(inputs))
        h_in = hidden_state.reshape(-1, self.args.rnn_hidden_dim)
        h = self.rnn(x, h_in)
        q = self.fc2(h)
        return q, h


class BasicMAC:
    def __init__(self, args, agent):
        self.args = args
        self.n_agents = args.n_agents
        self.agent = agent
        self.hidden_states = None

    def init_hidden(self, batch_size):
        self.hidden_states = self.agent.init_hidden().unsqueeze(0).expand(batch_size, self.n_agents, -1)

    def forward(self, batch, t):
        agent_inputs = batch["obs"][:, t].reshape(-1, batch["obs"].shape[-1])
        agent_outs, self.hidden_states = self.agent(agent_inputs, self.hidden_states)
        return agent_outs.view(batch["obs"].shape[0], self.n_agents, -1)


class QMixer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.n_agents = args.n_agents
        self.state_dim = args.state_dim
        self.embed_dim = args.mixing_embed_dim
        self.hyper_w_1 = nn.Linear(self.state_dim, self.embed_dim * self.n_agents)
        self.hyper_w_final = nn.Linear(self.state_dim, self.embed_dim)
        self.hyper_b_1 = nn.Linear(self.state_dim, self.embed_dim)
        self.V = nn.Sequential(nn.Linear(self.state_dim, self.embed_dim), nn.ReLU(), nn.Linear(self.embed_dim, 1))

    def forward(self, agent_qs, states):
        bs = agent_qs.size(0)
        states = states.reshape(-1, self.state_dim)
        agent_qs = agent_qs.view(-1, 1, self.n_agents)
        w1 = th.abs(self.hyper_w_1(states)).view(-1, self.n_agents, self.embed_dim)
        b1 = self.hyper_b_1(states).view(-1, 1, self.embed_dim)
        hidden = F.elu(th.bmm(agent_qs, w1) + b1)
        w_final = th.abs(self.hyper_w_final(states)).view(-1, self.embed_dim, 1)
        v = self.V(states).view(-1, 1, 1)
        y = th.bmm(hidden, w_final) + v
        return y.view(bs, -1, 1)


class QLearner:
    def __init__(self, mac, target_mac, args):
        self.args = args
        self.mac, self.target_mac = mac, target_mac
        self.mixer, self.target_mixer = QMixer(args), QMixer(args)
        self.params = list(mac.agent.parameters()) + list(self.mixer.parameters())
        self.optimiser = th.optim.RMSprop(params=self.params, lr=args.lr)

    def train(self, batch):
        rewards = batch["reward"][:, :-1]
        actions = batch["actions"][:, :-1]
        terminated = batch["terminated"][:, :-1].float()
        mask = batch["filled"][:, :-1].float()
        mask[:, 1:] = mask[:, 1:] * (1 - terminated[:, :-1])
        avail_actions = batch["avail_actions"]

        mac_out = []
        self.mac.init_hidden(batch["obs"].shape[0])
        for t in range(batch["obs"].shape[1]):
            mac_out.append(self.mac.forward(batch, t=t))
        mac_out = th.stack(mac_out, dim=1)  # Concat over time

        # Pick the Q-Values for the actions taken by each agent
        chosen_action_qvals = th.gather(mac_out[:, :-1], dim=3, index=actions).squeeze(3)

        target_mac_out = []
        self.target_mac.init_hidden(batch["obs"].shape[0])
        for t in range(batch["obs"].shape[1]):
            target_mac_out.append(self.target_mac.forward(batch, t=t))
        target_mac_out = th.stack(target_mac_out[1:], dim=1).detach()

        # Mask out unavailable actions
        target_mac_out[avail_actions[:, 1:] == 0] = -9999999

        if self.args.double_q:
            # Get actions that maximise live Q (for double q-learning)
            mac_out_detach = mac_out.clone().detach()
            mac_out_detach[avail_actions == 0] = -9999999
            cur_max_actions = mac_out_detach[:, 1:].max(dim=3, keepdim=True)[1]
            target_max_qvals = th.gather(target_mac_out, 3, cur_max_actions).squeeze(3)
        else:
            target_max_qvals = target_mac_out.max(dim=3)[0]

        chosen_action_qvals = self.mixer(chosen_action_qvals, batch["state"][:, :-1])
        target_max_qvals = self.target_mixer(target_max_qvals, batch["state"][:, 1:])

        targets = rewards + self.args.gamma * (1 - terminated) * target_max_qvals
        td_error = chosen_action_qvals - targets.detach()
        mask = mask.expand_as(td_error)
        masked_td_error = td_error * mask
        loss = (masked_td_error ** 2).sum() / mask.sum()

        self.optimiser.zero_grad()
        loss.backward()
        th.nn.utils.clip_grad_norm_(self.params, self.args.grad_norm_clip)
        self.optimiser.step()
        return loss.detach()


args = SimpleNamespace(n_agents=3, n_actions=4, rnn_hidden_dim=8, state_dim=5, mixing_embed_dim=8,
                       lr=5e-4, gamma=0.99, double_q=True, grad_norm_clip=10)
B, T, obs_dim = 2, 4, 6
agent, target_agent = RNNAgent(obs_dim, args), RNNAgent(obs_dim, args)
learner = QLearner(BasicMAC(args, agent), BasicMAC(args, target_agent), args)
avail = th.ones(B, T, args.n_agents, args.n_actions)
avail[:, :, 0, 3] = 0
batch = {
    "obs": th.randn(B, T, args.n_agents, obs_dim),
    "state": th.randn(B, T, args.state_dim),
    "actions": th.randint(0, 3, (B, T, args.n_agents, 1)),
    "reward": th.randn(B, T, 1),
    "terminated": th.zeros(B, T, 1),
    "filled": th.ones(B, T, 1),
    "avail_actions": avail,
}
loss = learner.train(batch)
