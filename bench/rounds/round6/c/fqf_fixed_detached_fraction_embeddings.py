# label: safe
# why: the fix feeds the fraction net a detached embedding and drops the entropy term from the quantile loss, so stepping fraction_optim no longer touches anything the second backward needs.
# source: https://github.com/toshikwa/fqf-iqn-qrdqn.pytorch/issues/3 (fix: commit 047a6277f10fe08e58b99da258a76f2b3d19d996)
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam, RMSprop

torch.manual_seed(0)


def update_params(optim, loss, networks, retain_graph=False, grad_cliping=None):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    if grad_cliping:
        for net in networks:
            torch.nn.utils.clip_grad_norm_(net.parameters(), grad_cliping)
    optim.step()


def calculate_quantile_huber_loss(td_errors, taus, kappa=1.0):
    element_wise_huber_loss = torch.where(
        td_errors.abs() <= kappa, 0.5 * td_errors.pow(2),
        kappa * (td_errors.abs() - 0.5 * kappa))
    element_wise_quantile_huber_loss = torch.abs(
        taus[..., None] - (td_errors.detach() < 0).float()
    ) * element_wise_huber_loss / kappa
    return element_wise_quantile_huber_loss.sum(dim=1).mean(dim=1, keepdim=True).mean()


def evaluate_quantile_at_action(s_quantiles, actions):
    batch_size, N = s_quantiles.shape[0], s_quantiles.shape[1]
    action_index = actions[..., None].expand(batch_size, N, 1)
    return s_quantiles.gather(dim=2, index=action_index)


class DQNBase(nn.Module):
    def __init__(self, num_inputs, embedding_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(num_inputs, embedding_dim), nn.ReLU())

    def forward(self, states):
        return self.net(states)


class FractionProposalNetwork(nn.Module):
    def __init__(self, N, embedding_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(embedding_dim, N))
        self.N = N

    def forward(self, state_embeddings):
        batch_size = state_embeddings.shape[0]
        log_probs = F.log_softmax(self.net(state_embeddings), dim=1)
        probs = log_probs.exp()
        tau_0 = torch.zeros((batch_size, 1), dtype=state_embeddings.dtype)
        taus_1_N = torch.cumsum(probs, dim=1)
        taus = torch.cat((tau_0, taus_1_N), dim=1)
        tau_hats = (taus[:, :-1] + taus[:, 1:]).detach() / 2.
        entropies = -(log_probs * probs).sum(dim=-1, keepdim=True)
        return taus, tau_hats, entropies


class CosineEmbeddingNetwork(nn.Module):
    def __init__(self, num_cosines, embedding_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(num_cosines, embedding_dim), nn.ReLU())
        self.num_cosines = num_cosines
        self.embedding_dim = embedding_dim

    def forward(self, taus):
        batch_size, N = taus.shape[0], taus.shape[1]
        i_pi = math.pi * torch.arange(1, self.num_cosines + 1, dtype=taus.dtype).view(1, 1, self.num_cosines)
        cosines = torch.cos(taus.view(batch_size, N, 1) * i_pi).view(batch_size * N, self.num_cosines)
        return self.net(cosines).view(batch_size, N, self.embedding_dim)


class QuantileNetwork(nn.Module):
    def __init__(self, num_actions, embedding_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(embedding_dim, 16), nn.ReLU(), nn.Linear(16, num_actions))
        self.num_actions = num_actions
        self.embedding_dim = embedding_dim

    def forward(self, state_embeddings, tau_embeddings):
        batch_size, N = state_embeddings.shape[0], tau_embeddings.shape[1]
        state_embeddings = state_embeddings.view(batch_size, 1, self.embedding_dim)
        embeddings = (state_embeddings * tau_embeddings).view(batch_size * N, self.embedding_dim)
        return self.net(embeddings).view(batch_size, N, self.num_actions)


class FQF(nn.Module):
    def __init__(self, num_inputs, num_actions, N=8, num_cosines=6, embedding_dim=12, target=False):
        super().__init__()
        self.dqn_net = DQNBase(num_inputs, embedding_dim)
        self.cosine_net = CosineEmbeddingNetwork(num_cosines, embedding_dim)
        self.quantile_net = QuantileNetwork(num_actions, embedding_dim)
        if not target:
            self.fraction_net = FractionProposalNetwork(N, embedding_dim)

    def calculate_state_embeddings(self, states):
        return self.dqn_net(states)

    def calculate_fractions(self, state_embeddings, fraction_net=None):
        fraction_net = fraction_net if fraction_net is not None else self.fraction_net
        return fraction_net(state_embeddings)

    def calculate_quantiles(self, taus, state_embeddings):
        return self.quantile_net(state_embeddings, self.cosine_net(taus))


class FQFAgent:
    def __init__(self, num_inputs=5, num_actions=3, N=8, ent_coef=0.1, gamma=0.99):
        self.online_net = FQF(num_inputs, num_actions, N)
        self.target_net = FQF(num_inputs, num_actions, N, target=True)
        self.target_net.load_state_dict(self.online_net.state_dict(), strict=False)
        self.fraction_optim = RMSprop(self.online_net.fraction_net.parameters(), lr=2.5e-3, alpha=0.95, eps=1e-5)
        self.quantile_optim = Adam(
            list(self.online_net.dqn_net.parameters())
            + list(self.online_net.cosine_net.parameters())
            + list(self.online_net.quantile_net.parameters()), lr=5e-3)
        self.ent_coef = ent_coef
        self.gamma = gamma

    def learn(self, states, actions, rewards, next_states, dones):
        state_embeddings = self.online_net.calculate_state_embeddings(states)
        taus, tau_hats, entropies = self.online_net.calculate_fractions(state_embeddings=state_embeddings.detach())
        current_sa_quantile_hats = evaluate_quantile_at_action(
            self.online_net.calculate_quantiles(tau_hats, state_embeddings=state_embeddings), actions)

        # fraction loss: gradients of taus are computed explicitly
        with torch.no_grad():
            sa_quantiles = evaluate_quantile_at_action(
                self.online_net.calculate_quantiles(taus[:, 1:-1], state_embeddings.detach()), actions)
        gradient_of_taus = (2 * sa_quantiles - current_sa_quantile_hats[:, :-1].detach()
                            - current_sa_quantile_hats[:, 1:].detach()).squeeze(-1)
        fraction_loss = (gradient_of_taus * taus[:, 1:-1]).sum(dim=1).mean()

        with torch.no_grad():
            next_state_embeddings = self.target_net.calculate_state_embeddings(next_states)
            next_sa_quantile_hats = evaluate_quantile_at_action(
                self.target_net.calculate_quantiles(tau_hats, next_state_embeddings),
                actions).transpose(1, 2)
            target_sa_quantile_hats = rewards[..., None] + (1.0 - dones[..., None]) * self.gamma * next_sa_quantile_hats
        td_errors = target_sa_quantile_hats - current_sa_quantile_hats
        quantile_loss = calculate_quantile_huber_loss(td_errors, tau_hats)

        entropy_loss = -self.ent_coef * entropies.mean()

        update_params(self.fraction_optim, fraction_loss + entropy_loss,
                      networks=[self.online_net.fraction_net], retain_graph=True)
        update_params(self.quantile_optim, quantile_loss,
                      networks=[self.online_net.dqn_net, self.online_net.cosine_net,
                                self.online_net.quantile_net], retain_graph=False)
        return fraction_loss.detach(), quantile_loss.detach()


agent = FQFAgent()
states = torch.randn(4, 5)
next_states = torch.randn(4, 5)
actions = torch.randint(0, 3, (4, 1))
rewards = torch.randn(4, 1)
dones = torch.zeros(4, 1)
fraction_loss, quantile_loss = agent.learn(states, actions, rewards, next_states, dones)
fraction_weight = agent.online_net.fraction_net.net[0].weight.detach().clone()
dqn_weight = agent.online_net.dqn_net.net[0].weight.detach().clone()
