#include <functional>
#include <vector>

namespace sched {

class Scheduler {
public:
    explicit Scheduler(int workers) : workers_(workers) {}
    void submit(Task task, int priority = 0);
    int drain(std::vector<Task>& out);

private:
    int workers_;
    std::vector<Task> queue_;
};

void Scheduler::submit(Task task, int priority) {
    if (priority > 0) {
        queue_.insert(queue_.begin(), std::move(task));
        return;
    }
    queue_.push_back(task);
    auto log = [&task, priority](int level) { report(task.name, level + priority); };
    log(priority);
}

int Scheduler::drain(std::vector<Task>& out) {
    int count = 0;
    for (auto& task : queue_) {
        out.push_back(task);
        ++count;
    }
    auto [first, last] = bounds(out);
    count += last - first;
    queue_.clear();
    auto total = new Counter(count);
    try {
        total->flush();
    } catch (const std::exception& error) {
        sched::log(error);
    }
    return count;
}

}  // namespace sched
