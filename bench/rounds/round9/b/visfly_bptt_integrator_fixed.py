# label: safe
# why: after the fix the integrator returns new state tensors and the partial reset uses torch.where, so velocities saved by earlier steps of the BPTT rollout stay intact.
# source: https://github.com/SJTU-ViSYS-team/VisFly/pull/35
import torch
from torch import nn

torch.manual_seed(0)


class Integrator:
    def __init__(self, dt):
        self.dt = dt

    def integrate(self, pos, vel, acc):
        pos = pos + vel * self.dt
        vel = vel + acc * self.dt
        return pos, vel


class Dynamics:
    def __init__(self, num, dt=0.1):
        self.num = num
        self.integrator = Integrator(dt)
        self._quad_drag_coeffs = torch.full((3, num), 0.05)
        self.reset()

    def reset(self, indices=None):
        if indices is None:
            self._position = torch.zeros(3, self.num)
            self._velocity = torch.zeros(3, self.num)
        else:
            mask = torch.zeros(self.num, dtype=torch.bool)
            mask[indices] = True
            self._position = torch.where(mask, torch.zeros_like(self._position), self._position)
            self._velocity = torch.where(mask, torch.zeros_like(self._velocity), self._velocity)

    @property
    def position(self):
        return self._position.T

    def step(self, thrust):
        drag = self._quad_drag_coeffs * self._velocity * self._velocity.abs()
        acc = thrust.T - drag
        self._position, self._velocity = self.integrator.integrate(self._position, self._velocity, acc)


policy = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
dynamics = Dynamics(num=4)
target = torch.tensor([1.0, 0.0, 0.5])
rewards = []
for t in range(5):
    obs = torch.cat([dynamics.position, dynamics._velocity.T], dim=1)
    thrust = policy(obs)
    dynamics.step(thrust)
    rewards.append(-(dynamics.position - target).norm(dim=1))
    if t == 2:
        dynamics.reset(indices=torch.tensor([1]))
actor_loss = -torch.stack(rewards).sum(0).mean()
actor_loss.backward()
