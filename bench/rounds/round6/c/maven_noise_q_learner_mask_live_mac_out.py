# label: hazard raises
# why: mac_out[avail_actions == 0] = -9999999 masks the live agent Q-values in place, but gather() saved the slice mac_out[:, :-1] to backprop chosen_action_qvals, so loss.backward() fails.
# source: https://github.com/AnujMahajanOxf/MAVEN/issues/3 (maven_code/src/learners/noise_q_learner.py train())
from types import SimpleNamespace

import torch as th
import torch.nn as nn
import torch.nn.functional as F

th.manual_seed(0)


class NoiseMAC:
    def __init__(self, input_dim, n_actions, hidden=8):
        self.agent = nn.GRUCell(input_dim, hidden)
        self.head = nn.Linear(hidden, n_actions)
        self.hidden = None

    def init_hidden(self, batch_size, n_agents):
        self.hidden = th.zeros(batch_size * n_agents, self.agent.hidden_size)

    def forward(self, batch, t):
        obs = batch["obs"][:, t]
        bs, n_agents, _ = obs.shape
        self.hidden = self.agent(obs.reshape(bs * n_agents, -1), self.hidden)
        return self.head(self.hidden).view(bs, n_agents, -1)

    def parameters(self):
        return list(self.agent.parameters()) + list(self.head.parameters())


class NoiseQMixer(nn.Module):
    def __init__(self, n_agents, state_dim, noise_dim):
        super().__init__()
        self.hyper_w = nn.Linear(state_dim + noise_dim, n_agents)
        self.hyper_b = nn.Linear(state_dim, 1)

    def forward(self, agent_qs, states, noise):
        bs, ts, _ = agent_qs.shape
        noise = noise.unsqueeze(1).expand(bs, ts, noise.shape[-1])
        w = th.abs(self.hyper_w(th.cat([states, noise], dim=-1)))
        return (agent_qs * w).sum(dim=-1, keepdim=True) + self.hyper_b(states)


class NoiseQLearner:
    def __init__(self, mac, target_mac, mixer, target_mixer, discrim, args):
        self.mac, self.target_mac = mac, target_mac
        self.mixer, self.target_mixer = mixer, target_mixer
        self.discrim = discrim
        self.discrim_loss = nn.CrossEntropyLoss(reduction="none")
        self.args = args
        self.params = mac.parameters() + list(mixer.parameters()) + list(discrim.parameters())
        self.optimiser = th.optim.RMSprop(params=self.params, lr=args.lr, alpha=0.99, eps=1e-5)

    def train(self, batch):
        rewards = batch["reward"][:, :-1]
        actions = batch["actions"][:, :-1]
        terminated = batch["terminated"][:, :-1].float()
        mask = batch["filled"][:, :-1].float()
        mask[:, 1:] = mask[:, 1:] * (1 - terminated[:, :-1])
        avail_actions = batch["avail_actions"]
        noise = batch["noise"][:, 0]
        bs, T = batch["obs"].shape[:2]

        # Calculate estimated Q-Values
        mac_out = []
        self.mac.init_hidden(bs, self.args.n_agents)
        for t in range(T):
            agent_outs = self.mac.forward(batch, t=t)
            mac_out.append(agent_outs)
        mac_out = th.stack(mac_out, dim=1)  # Concat over time

        # Pick the Q-Values for the actions taken by each agent
        chosen_action_qvals = th.gather(mac_out[:, :-1], dim=3, index=actions).squeeze(3)  # Remove the last dim

        # Calculate the Q-Values necessary for the target
        target_mac_out = []
        self.target_mac.init_hidden(bs, self.args.n_agents)
        for t in range(T):
            target_agent_outs = self.target_mac.forward(batch, t=t)
            target_mac_out.append(target_agent_outs)
        target_mac_out = th.stack(target_mac_out[1:], dim=1)  # Concat across time

        # Mask out unavailable actions
        target_mac_out[avail_actions[:, 1:] == 0] = -9999999  # From OG deepmarl

        # Max over target Q-Values
        if self.args.double_q:
            # Get actions that maximise live Q (for double q-learning)
            mac_out[avail_actions == 0] = -9999999  # <-- IPL001: masks mac_out, whose slice gather() saved for backward
            cur_max_actions = mac_out[:, 1:].max(dim=3, keepdim=True)[1]
            target_max_qvals = th.gather(target_mac_out, 3, cur_max_actions).squeeze(3)
        else:
            target_max_qvals = target_mac_out.max(dim=3)[0]

        # Mix
        chosen_action_qvals = self.mixer(chosen_action_qvals, batch["state"][:, :-1], noise)
        target_max_qvals = self.target_mixer(target_max_qvals, batch["state"][:, 1:], noise)

        # Discriminator
        mac_out[avail_actions == 0] = -9999999  # <-- IPL001: masks mac_out, whose slice gather() saved for backward
        q_softmax_actions = F.softmax(mac_out[:, :-1], dim=3)
        q_softmax_agents = q_softmax_actions.reshape(q_softmax_actions.shape[0], q_softmax_actions.shape[1], -1)
        states = batch["state"][:, :-1]
        state_and_softactions = th.cat([q_softmax_agents, states], dim=2)
        s_and_softa_reshaped = state_and_softactions.reshape(-1, state_and_softactions.shape[-1])
        discrim_prediction = self.discrim(s_and_softa_reshaped)

        target_repeats = q_softmax_actions.shape[1]
        discrim_target = batch["noise"][:, 0].long().detach().max(dim=1)[1].unsqueeze(1).repeat(1, target_repeats).reshape(-1)
        discrim_loss = self.discrim_loss(discrim_prediction, discrim_target)
        masked_discrim_loss = discrim_loss * mask.reshape(-1)
        averaged_discrim_loss = masked_discrim_loss.sum() / mask.sum()

        # Calculate 1-step Q-Learning targets
        targets = rewards + self.args.gamma * (1 - terminated) * target_max_qvals
        td_error = (chosen_action_qvals - targets.detach())
        mask = mask.expand_as(td_error)
        masked_td_error = td_error * mask
        loss = (masked_td_error ** 2).sum() / mask.sum()
        loss = loss + self.args.mi_loss * averaged_discrim_loss

        # Optimise
        self.optimiser.zero_grad()
        loss.backward()
        grad_norm = th.nn.utils.clip_grad_norm_(self.params, self.args.grad_norm_clip)
        self.optimiser.step()
        return loss.detach(), grad_norm


args = SimpleNamespace(n_agents=3, n_actions=4, noise_dim=2, state_dim=5, obs_dim=6,
                       double_q=True, gamma=0.99, mi_loss=1.0, lr=5e-4, grad_norm_clip=10)
bs, T = 2, 4
batch = {
    "obs": th.randn(bs, T, args.n_agents, args.obs_dim),
    "state": th.randn(bs, T, args.state_dim),
    "actions": th.randint(0, args.n_actions, (bs, T, args.n_agents, 1)),
    "reward": th.randn(bs, T, 1),
    "terminated": th.zeros(bs, T, 1, dtype=th.long),
    "filled": th.ones(bs, T, 1, dtype=th.long),
    "avail_actions": (th.rand(bs, T, args.n_agents, args.n_actions) > 0.3).long(),
    "noise": F.one_hot(th.randint(0, args.noise_dim, (bs, T)), args.noise_dim).float(),
}
batch["avail_actions"].scatter_(3, batch["actions"], 1)
mac = NoiseMAC(args.obs_dim, args.n_actions)
target_mac = NoiseMAC(args.obs_dim, args.n_actions)
mixer = NoiseQMixer(args.n_agents, args.state_dim, args.noise_dim)
target_mixer = NoiseQMixer(args.n_agents, args.state_dim, args.noise_dim)
discrim = nn.Sequential(nn.Linear(args.n_agents * args.n_actions + args.state_dim, 16), nn.ReLU(),
                        nn.Linear(16, args.noise_dim))
learner = NoiseQLearner(mac, target_mac, mixer, target_mixer, discrim, args)
loss, grad_norm = learner.train(batch)
head_weight = mac.head.weight.detach().clone()
