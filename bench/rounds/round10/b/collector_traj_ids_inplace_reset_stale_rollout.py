# label: hazard silent
# why: when an env is done the collector renumbers traj_ids in place on the tensor it also cached in the rollout, so every earlier step stacked from the rollout silently gets the new trajectory ids.
# source: https://github.com/pytorch/rl/pull/1331
import torch

torch.manual_seed(0)


class ToyEnv:
    def __init__(self, num_envs, horizon):
        self.num_envs = num_envs
        self.horizon = horizon
        self.t = torch.zeros(num_envs, dtype=torch.long)

    def reset(self):
        self.t.zero_()
        return {"observation": torch.zeros(self.num_envs, 2)}

    def step(self, action):
        self.t += 1
        done = (self.t % torch.tensor([2, 3, 4])[: self.num_envs]) == 0
        obs = torch.randn(self.num_envs, 2) + action.unsqueeze(-1)
        return {"observation": obs, "reward": -obs.pow(2).sum(-1), "done": done}


class SyncDataCollector:
    def __init__(self, env, policy, frames_per_batch):
        self.env = env
        self.policy = policy
        self.frames_per_batch = frames_per_batch
        self._tensordict = env.reset()
        self._tensordict[("collector", "traj_ids")] = torch.arange(env.num_envs)

    def _step_and_maybe_reset(self, done):
        if done.any():
            traj_ids = self._tensordict[("collector", "traj_ids")]
            traj_ids[done] = traj_ids.max() + torch.arange(1, done.sum() + 1)  # <-- IPL002: the same tensor is still cached in earlier rollout steps
            self._tensordict[("collector", "traj_ids")] = traj_ids

    def rollout(self):
        tensordicts = []
        for _ in range(self.frames_per_batch):
            action = self.policy(self._tensordict["observation"])
            out = self.env.step(action)
            step_td = {
                "observation": self._tensordict["observation"],
                "action": action,
                "reward": out["reward"],
                "done": out["done"],
                "traj_ids": self._tensordict[("collector", "traj_ids")],
            }
            tensordicts.append(step_td)
            self._tensordict["observation"] = out["observation"]
            self._step_and_maybe_reset(out["done"])
        return {k: torch.stack([td[k] for td in tensordicts], dim=1) for k in tensordicts[0]}


policy_net = torch.nn.Linear(2, 1)


def policy(obs):
    with torch.no_grad():
        return torch.tanh(policy_net(obs)).squeeze(-1)


collector = SyncDataCollector(ToyEnv(3, 6), policy, frames_per_batch=6)
batch = collector.rollout()
traj_ids = batch["traj_ids"]
rewards = batch["reward"]
