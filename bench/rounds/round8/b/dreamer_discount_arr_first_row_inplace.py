# label: hazard raises
# why: discount_arr slices were saved by the multiplications inside compute_return (they scale grad-carrying values), then discount_arr[0] = 1 overwrites them before actor_loss.backward()
# source: https://github.com/juliusfrost/dreamer-pytorch/pull/62 (commit 1e1e2e2022258ac048858604bb0c60647cbfb084)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Normal1:
    def __init__(self, mean):
        self.mean = mean


class DenseModel(nn.Module):
    def __init__(self, feature_size, out=1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feature_size, 16), nn.ELU(), nn.Linear(16, out))

    def forward(self, feat):
        return Normal1(self.net(feat))


class DreamerModel(nn.Module):
    def __init__(self, feature_size=6, action_size=2):
        super().__init__()
        self.action_decoder = nn.Sequential(nn.Linear(feature_size, 16), nn.ELU(), nn.Linear(16, action_size), nn.Tanh())
        self.transition = nn.Linear(feature_size + action_size, feature_size)
        self.reward_model = DenseModel(feature_size)
        self.value_model = DenseModel(feature_size)

    def rollout_policy(self, steps, start):
        feats = [start]
        state = start
        for _ in range(steps - 1):
            action = self.action_decoder(state)
            state = torch.tanh(self.transition(torch.cat([state, action], -1)))
            feats.append(state)
        return torch.stack(feats)


class Dreamer:
    def __init__(self, model, horizon=5, discount=0.99, discount_lambda=0.95):
        self.model = model
        self.horizon = horizon
        self.discount = discount
        self.discount_lambda = discount_lambda
        self.actor_optimizer = torch.optim.Adam(model.action_decoder.parameters(), lr=8e-5)
        self.value_optimizer = torch.optim.Adam(model.value_model.parameters(), lr=8e-5)

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

    def loss(self, flat_post):
        model = self.model
        imag_feat = model.rollout_policy(self.horizon, flat_post)

        for p in model.reward_model.parameters():
            p.requires_grad = False
        for p in model.value_model.parameters():
            p.requires_grad = False
        imag_reward = model.reward_model(imag_feat).mean
        value = model.value_model(imag_feat).mean
        for p in model.reward_model.parameters():
            p.requires_grad = True
        for p in model.value_model.parameters():
            p.requires_grad = True

        discount_arr = self.discount * torch.ones_like(imag_reward)
        returns = self.compute_return(imag_reward[:-1], value[:-1], discount_arr[:-1],
                                      bootstrap=value[-1], lambda_=self.discount_lambda)
        # Make the top row 1 so the cumulative product starts with discount^0
        discount_arr[0] = 1  # <-- IPL001: discount_arr[:-1] was saved by the muls in compute_return
        discount = torch.cumprod(discount_arr[:-1], 0)
        actor_loss = -torch.mean(discount * returns)

        with torch.no_grad():
            value_feat = imag_feat[:-1].detach()
            value_discount = discount.detach()
            value_target = returns.detach()
        value_pred = model.value_model(value_feat).mean
        value_loss = torch.mean(value_discount * (value_pred - value_target) ** 2)
        return actor_loss, value_loss

    def optimize_agent(self, flat_post):
        actor_loss, value_loss = self.loss(flat_post)
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.action_decoder.parameters(), 100.0)
        self.actor_optimizer.step()

        self.value_optimizer.zero_grad()
        value_loss.backward()
        self.value_optimizer.step()
        return actor_loss.detach(), value_loss.detach()


algo = Dreamer(DreamerModel())
actor_loss, value_loss = algo.optimize_agent(torch.randn(4, 6))
