# label: hazard raises no-twin
# why: the adaptive-grid ODE solver restores the ODE function's state with load_state_dict after every trial step, which copies into the parameters in place although earlier accepted steps saved those weights for backward
# source: https://github.com/juntang-zhuang/torch_ACA/issues/1
import torch
import torch.nn as nn

torch.manual_seed(0)


class ODEFunc(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 16)
        self.norm = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, dim)

    def forward(self, t, y):
        return self.fc2(torch.tanh(self.norm(self.fc1(y))))


class RK12Solver:
    def __init__(self, func, t0, t1, h=None, rtol=1e-2, atol=1e-3, safety=0.9):
        self.func = func
        self.t0, self.t1 = t0, t1
        self.h = h
        self.rtol, self.atol, self.safety = rtol, atol, safety

    def step(self, func, t, dt, y):
        k1 = func(t, y)
        k2 = func(t + dt, y + dt * k1)
        y_new = y + dt * 0.5 * (k1 + k2)
        error = dt * 0.5 * (k2 - k1)
        return y_new, error

    def integrate(self, y0, reload_state=True):
        state0 = self.func.state_dict() if reload_state else None
        y_current, t_current = y0, self.t0
        h_current = self.h if self.h is not None else 0.25 * (self.t1 - self.t0)
        self.neval = 0
        while t_current < self.t1 - 1e-8:
            h_current = min(h_current, self.t1 - t_current)
            if reload_state:
                state0 = self.func.state_dict()
            step_accepted, n_try = False, 0
            # determine optimal stepsize with trial steps that must not change the BN statistics
            while not step_accepted:
                with torch.no_grad():
                    y_detach = y_current.detach()
                    _y_new, _error = self.step(self.func, t_current, h_current, y_detach)
                    tol = self.atol + self.rtol * torch.max(y_detach.abs(), _y_new.abs())
                    error_ratio = (_error.abs() / tol).max().item()
                    n_try += 1
                    if error_ratio <= 1.0 or n_try >= 4:
                        step_accepted = True
                    else:
                        h_current = h_current * max(0.2, self.safety * error_ratio ** -0.5)
                # restore state dict to before integrate
                if reload_state:
                    self.func.load_state_dict(state0)  # <-- IPL001: copies into weights saved by the accepted steps' graph
            # step forward with gradient tracking
            y_current, _ = self.step(self.func, t_current, h_current, y_current)
            t_current = t_current + h_current
            self.neval += 1
        return y_current


class ODEBlock(nn.Module):
    def __init__(self, odefunc, t1=1.0):
        super().__init__()
        self.odefunc = odefunc
        self.t1 = t1

    def forward(self, x):
        solver = RK12Solver(self.odefunc, t0=0.0, t1=self.t1, h=0.3)
        return solver.integrate(x)


model = nn.Sequential(nn.Linear(4, 6), ODEBlock(ODEFunc(6)), nn.Linear(6, 3))
x = torch.randn(8, 4)
y = torch.randint(0, 3, (8,))
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
