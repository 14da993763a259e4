# label: hazard silent
# why: the rejection sampler divides the target logits by the temperature in place, so the "raw" logprobs computed afterwards from the same logits tensor silently see the temperature-scaled values.
# source: https://github.com/vllm-project/vllm/pull/30846
import torch

torch.manual_seed(0)


class SamplingMetadata:
    def __init__(self, temperature, all_greedy, max_num_logprobs):
        self.temperature = temperature
        self.all_greedy = all_greedy
        self.max_num_logprobs = max_num_logprobs


class Sampler:
    def __init__(self, logprobs_mode="raw_logprobs"):
        self.logprobs_mode = logprobs_mode

    @staticmethod
    def apply_temperature(logits, temp):
        # Use in-place division to avoid creating a new tensor.
        return logits.div_(temp.unsqueeze(dim=1))  # <-- IPL002

    def compute_logprobs(self, logits):
        return logits.log_softmax(dim=-1, dtype=torch.float32)


class RejectionSampler:
    def __init__(self, sampler):
        self.sampler = sampler

    def forward(self, draft_token_ids, target_logits, sampling_metadata):
        if not sampling_metadata.all_greedy:
            target_logits = self.sampler.apply_temperature(
                target_logits, sampling_metadata.temperature
            )
        target_probs = target_logits.softmax(dim=-1, dtype=torch.float32)
        accepted = target_probs.gather(1, draft_token_ids.unsqueeze(1)).squeeze(1) > 0.05
        return accepted, target_probs


def execute_model(logits, draft_token_ids, sampling_metadata, rejection_sampler):
    accepted, _ = rejection_sampler.forward(draft_token_ids, logits, sampling_metadata)
    # logprobs_mode == "raw_logprobs": logprobs of the model output, before sampling params
    raw_logprobs = rejection_sampler.sampler.compute_logprobs(logits)
    topk = raw_logprobs.topk(sampling_metadata.max_num_logprobs, dim=-1)
    return accepted, topk.values


def main():
    num_tokens, vocab_size = 4, 16
    logits = torch.randn(num_tokens, vocab_size) * 3
    draft_token_ids = torch.randint(0, vocab_size, (num_tokens,))
    meta = SamplingMetadata(
        temperature=torch.tensor([0.5, 0.7, 1.5, 2.0]), all_greedy=False, max_num_logprobs=3
    )
    rs = RejectionSampler(Sampler())
    accepted, logprobs = execute_model(logits, draft_token_ids, meta, rs)
    return accepted, logprobs


accepted, logprobs = main()
