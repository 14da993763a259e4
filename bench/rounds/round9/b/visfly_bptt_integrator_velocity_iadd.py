# label: hazard raises
# why: the BPTT rollout's integrator updates the simulator state with `vel += acc * dt` and the partial reset writes `self._velocity[:, indices] = 0`, overwriting velocity tensors the quadratic drag term of earlier steps saved for backward.
# source: https://github.com/SJTU-ViSYS-team/VisFly/pull/35
import torch
from torch import nn

torch.manual_seed(0)


class Integrator:
    def __init__(self, dt):
        self.dt = dt

    def integrate(self, pos, vel, acc):
        pos += vel * self.dt
        vel += acc * self.dt  # <-- IPL001: vel was saved by the drag product in Dynamics.step
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
            self._position[:, indices] = 0.0
            self._velocity[:, indices] = 0.0  # <-- IPL001: partial reset overwrites a velocity saved for backward

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
