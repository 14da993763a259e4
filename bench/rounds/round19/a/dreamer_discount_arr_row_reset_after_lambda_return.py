# label: hazard raises
# why: compute_return multiplies by views of discount_arr (saved for the gradient w.r.t. the imagined values), and the later discount_arr[0] = 1 overwrites that tensor in place before actor_loss.backward().
# source: https://github.com/juliusfrost/dreamer-pytorch/commit/1e1e2e2022258ac048858604bb0c60647cbfb084
import torch
import torch.nn as nn

torch.manual_seed(0)


class DenseModel(nn.Module):
    def __init__(self, feature_size, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feature_size, hidden), nn.ELU(), nn.Linear(hidden, 1))

    def forward(self, feat):
        return self.net(feat)


class ActionDecoder(nn.Module):
    def __init__(self, feature_size, action_size):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feature_size, action_size), nn.Tanh())

    def forward(self, feat):
        return self.net(feat)


class Transition(nn.Module):
    def __init__(self, feature_size, action_size):
        super().__init__()
        self.cell = nn.GRUCell(action_size, feature_size)

    def forward(self, action, feat):
        return self.cell(action, feat)


def rollout_policy(steps, policy, transition, state):
    feats = []
    for _ in range(steps):
        action = policy(state)
        state = transition(action, state)
        feats.append(state)
    return torch.stack(feats, 0)


class DreamerAlgo:
    def __init__(self, discount=0.99, discount_lambda=0.95, horizon=5):
        self.discount = discount
        self.discount_lambda = discount_lambda
        self.horizon = horizon

    def compute_return(self, reward, value, discount, bootstrap, lambda_):
        next_values = torch.cat([value[1:], bootstrap[None]], 0)
        target = reward + discount * next_values * (1 - lambda_)
        timesteps = list(range(reward.shape[0] - 1, -1, -1))
        outputs = []
        accumulated_reward = bootstrap
        for t in timesteps:
            inp = target[t]
            discount_factor = discount[t]
            accumulated_reward = inp + discount_factor * lambda_ * accumulated_reward
            outputs.append(accumulated_reward)
        returns = torch.flip(torch.stack(outputs), [0])
        return returns

    def actor_loss(self, model, flat_post):
        imag_feat = rollout_policy(self.horizon, model['policy'], model['transition'], flat_post)
        for p in model['reward'].parameters():
            p.requires_grad = False
        for p in model['value'].parameters():
            p.requires_grad = False
        imag_reward = model['reward'](imag_feat)
        value = model['value'](imag_feat)
        for p in model['reward'].parameters():
            p.requires_grad = True
        for p in model['value'].parameters():
            p.requires_grad = True

        discount_arr = self.discount * torch.ones_like(imag_reward)
        returns = self.compute_return(imag_reward[:-1], value[:-1], discount_arr[:-1],
                                      bootstrap=value[-1], lambda_=self.discount_lambda)
        # Make the top row 1 so the cumulative product starts with discount^0
        discount_arr[0] = 1  # <-- IPL001: compute_return saved views of discount_arr for backward
        discount = torch.cumprod(discount_arr[:-1], 0)
        actor_loss = -torch.mean(discount * returns)
        return actor_loss, returns


feature_size, action_size = 6, 2
model = {
    'policy': ActionDecoder(feature_size, action_size),
    'transition': Transition(feature_size, action_size),
    'reward': DenseModel(feature_size, 8),
    'value': DenseModel(feature_size, 8),
}
actor_optimizer = torch.optim.Adam(model['policy'].parameters(), lr=8e-5)
algo = DreamerAlgo()
flat_post = torch.randn(3, feature_size)

actor_loss, returns = algo.actor_loss(model, flat_post)
actor_optimizer.zero_grad()
actor_loss.backward()
actor_optimizer.step()
