# label: safe
# why: the mean-teacher shadow weights are buffers blended in place inside torch.no_grad() after the student's backward, and the teacher output is only used as a no-grad target.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EMATeacher(nn.Module):
    def __init__(self, student, decay=0.9):
        super().__init__()
        self.decay = decay
        self.register_buffer("w", student.weight.detach().clone())
        self.register_buffer("b", student.bias.detach().clone())

    @torch.no_grad()
    def update(self, student):
        self.w.lerp_(student.weight, 1 - self.decay)
        self.b.lerp_(student.bias, 1 - self.decay)

    def forward(self, x):
        return F.linear(x, self.w, self.b)


student = nn.Linear(4, 3)
teacher = EMATeacher(student)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
x = torch.randn(5, 4)

for step in range(2):
    noisy = x + 0.1 * torch.randn_like(x)
    with torch.no_grad():
        target = F.softmax(teacher(x), dim=-1)
    loss = F.mse_loss(F.softmax(student(noisy), dim=-1), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    teacher.update(student)

teacher_out = teacher(x)
