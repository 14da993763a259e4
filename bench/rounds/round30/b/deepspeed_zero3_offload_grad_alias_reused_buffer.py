# label: hazard silent
# why: for fp32 gradients `param.grad.view(-1).float()` is the gradient buffer itself, so the offload list keeps an alias of the IPG bucket; when the bucket buffer is reused for the next micro-batch in place, the queued offload gradients silently change before the CPU optimizer consumes them.
# source: https://github.com/microsoft/DeepSpeed/commit/a3cee49b3e5b4f7cfe73ece1d22ab23e9be7add4
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FP16_DeepSpeedZeroOptimizer_Stage3:
    def __init__(self, module, lr=0.1):
        self.module = module
        self.params = list(module.parameters())
        self.lr = lr
        numel = sum(p.numel() for p in self.params)
        # contiguous gradient bucket that param.grad views point into
        self.ipg_bucket_flat_buffer = torch.zeros(numel)
        self.fp32_partitioned_groups_flat = [torch.cat([p.detach().reshape(-1) for p in self.params]).clone()]
        self.offload_fp32_gradients = {0: []}
        self.offload_fp32_offsets = {0: []}

    def reduce_ipg_grads(self):
        # copy the freshly computed grads into the bucket and point param.grad at it
        offset = 0
        for p in self.params:
            n = p.numel()
            self.ipg_bucket_flat_buffer[offset:offset + n].copy_(p.grad.reshape(-1))  # <-- IPL002
            p.grad = self.ipg_bucket_flat_buffer[offset:offset + n].view_as(p)
            offset += n

    def partition_grads(self, params_to_release):
        i = 0
        dest_offset = 0
        for param in params_to_release:
            self.offload_fp32_gradients[i].append(param.grad.view(-1).float())
            self.offload_fp32_offsets[i].append(dest_offset)
            dest_offset += param.numel()

    def step(self):
        fp32_param = self.fp32_partitioned_groups_flat[0]
        fp32_grad = torch.zeros_like(fp32_param)
        for grad, offset in zip(self.offload_fp32_gradients[0], self.offload_fp32_offsets[0]):
            fp32_grad[offset:offset + grad.numel()] += grad
        fp32_param.add_(fp32_grad, alpha=-self.lr)
        self.offload_fp32_gradients[0].clear()
        self.offload_fp32_offsets[0].clear()
        return fp32_param


def main():
    model = nn.Linear(4, 2)
    optimizer = FP16_DeepSpeedZeroOptimizer_Stage3(model)
    micro_batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(2)]

    # gradient accumulation: grads of every micro-batch are queued for the CPU optimizer
    for x, y in micro_batches:
        for p in model.parameters():
            p.grad = None
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.reduce_ipg_grads()
        optimizer.partition_grads(optimizer.params)

    fp32_param = optimizer.step()
    return fp32_param.clone()


updated_fp32_params = main()
